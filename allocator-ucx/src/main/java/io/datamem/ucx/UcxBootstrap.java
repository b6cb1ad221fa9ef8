package io.datamem.ucx;

import javax.crypto.SecretKey;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * Connects two contexts over a plain TCP socket: each side sends its name, its worker address and
 * 32 random bytes, and connects to the other's ({@link UcxContext#connect(byte[], String, SecretKey)})
 * with the connection's {@link #regionKey() region key}: SHA-256 of both sides' random bytes. The
 * socket stays open as a side channel for small messages ({@link #sendBytes}, {@link #receiveBytes};
 * remote regions sealed under the key: {@link #sendRegion}, {@link #receiveRegion}) until
 * {@link #close()}, which closes the endpoint too. The key is as secret as the socket: anyone who
 * reads the bootstrap exchange can seal regions for this connection (docs/distributed.md).
 */
public final class UcxBootstrap implements AutoCloseable {

    private static final int MAX_MESSAGE = 64 << 20;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final UcxEndpoint endpoint;
    private final SecretKey regionKey;

    private UcxBootstrap(Socket socket, UcxContext context, Duration timeout) throws IOException {
        this.socket = socket;
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
        sendBytes(context.id().getBytes(StandardCharsets.UTF_8));
        sendBytes(context.workerAddress());
        byte[] nonce = WireSeal.nonce();
        sendBytes(nonce);
        String peer = new String(receiveBytes(), StandardCharsets.UTF_8);
        byte[] address = receiveBytes();
        byte[] theirs = receiveBytes();
        if (theirs.length != WireSeal.NONCE_BYTES) {
            throw new IOException("bootstrap: the peer's key half is " + theirs.length + " bytes (expected: "
                    + WireSeal.NONCE_BYTES + ")");
        }
        this.regionKey = WireSeal.connectionKey(nonce, theirs);
        this.endpoint = context.connect(address, peer, regionKey);
    }

    /**
     * Accepts one peer on a listening socket and connects to it.
     *
     * @param context the local context
     * @param server  a bound server socket
     * @param timeout the longest to wait for the peer and for each later message
     * @return the connection
     * @throws NullPointerException if an argument is null
     * @throws IOException          if the socket fails or the peer does not come in time
     * @throws UcxException         if UCX cannot connect to the peer's address
     */
    public static UcxBootstrap accept(UcxContext context, ServerSocket server, Duration timeout) throws IOException {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(timeout, "timeout");
        server.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        Socket s = server.accept();
        try {
            return new UcxBootstrap(s, context, timeout);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * Connects to a peer waiting in {@link #accept}.
     *
     * @param context the local context
     * @param host    the peer's host
     * @param port    its port
     * @param timeout the longest to wait for each message
     * @return the connection
     * @throws NullPointerException if an argument is null
     * @throws IOException          if the socket fails
     * @throws UcxException         if UCX cannot connect to the peer's address
     */
    public static UcxBootstrap connect(UcxContext context, String host, int port, Duration timeout) throws IOException {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(timeout, "timeout");
        Socket s = new Socket(host, port);
        try {
            return new UcxBootstrap(s, context, timeout);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * The UCX endpoint to the peer.
     *
     * @return the endpoint
     */
    public UcxEndpoint endpoint() {
        return endpoint;
    }

    /**
     * The key of this connection for sealed regions: both sides hold the same one.
     *
     * @return the HMAC-SHA256 key
     */
    public SecretKey regionKey() {
        return regionKey;
    }

    /**
     * Sends a region sealed under this connection's key ({@link RemoteRegion#toBytes(SecretKey)}).
     *
     * @param region the region, as {@link UcxContext#export} returned it
     * @throws NullPointerException if {@code region} is null
     * @throws IOException          if the socket fails
     */
    public void sendRegion(RemoteRegion region) throws IOException {
        sendBytes(Objects.requireNonNull(region, "region").toBytes(regionKey));
    }

    /**
     * Receives a region sent with {@link #sendRegion} and checks its seal.
     *
     * @return the region, which this connection's endpoint accepts
     * @throws IOException              if the socket fails, times out, or the peer closed it
     * @throws IllegalArgumentException if the bytes are not a region sealed under this connection's
     *                                  key (corrupted or forged): the message says what was wrong
     */
    public RemoteRegion receiveRegion() throws IOException {
        return RemoteRegion.fromBytes(receiveBytes(), regionKey);
    }

    /**
     * Sends a small message on the side channel.
     *
     * @param bytes the message, at most 64 MiB
     * @throws NullPointerException     if {@code bytes} is null
     * @throws IllegalArgumentException if it is larger than 64 MiB
     * @throws IOException              if the socket fails
     */
    public void sendBytes(byte[] bytes) throws IOException {
        Objects.requireNonNull(bytes, "bytes");
        if (bytes.length > MAX_MESSAGE) {
            throw new IllegalArgumentException("bytes: " + bytes.length + " (expected: at most " + MAX_MESSAGE + ")");
        }
        out.writeInt(bytes.length);
        out.write(bytes);
        out.flush();
    }

    /**
     * Receives a message sent with {@link #sendBytes}.
     *
     * @return the message
     * @throws IOException if the socket fails, times out, or the peer closed it (an
     *                     {@link java.io.EOFException})
     */
    public byte[] receiveBytes() throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_MESSAGE) {
            throw new IOException("bootstrap message of " + n + " bytes (expected: 0.." + MAX_MESSAGE + ")");
        }
        return in.readNBytes(n);
    }

    /**
     * Closes the endpoint and the socket.
     *
     * @throws IOException if closing the socket fails
     */
    @Override
    public void close() throws IOException {
        try {
            if (endpoint != null) {
                endpoint.closeQuietly();
            }
        } finally {
            socket.close();
        }
    }
}
