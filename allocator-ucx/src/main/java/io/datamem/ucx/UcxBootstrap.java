package io.datamem.ucx;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * Connects two contexts over a plain TCP socket: each side sends its name and its worker address,
 * and connects to the other's ({@link UcxContext#connect}). The socket stays open as a side channel
 * for small messages ({@link #sendBytes}, {@link #receiveBytes}: remote regions, say) until
 * {@link #close()}, which closes the endpoint too.
 */
public final class UcxBootstrap implements AutoCloseable {

    private static final int MAX_MESSAGE = 64 << 20;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final UcxEndpoint endpoint;

    private UcxBootstrap(Socket socket, UcxContext context, Duration timeout) throws IOException {
        this.socket = socket;
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
        sendBytes(context.id().getBytes(StandardCharsets.UTF_8));
        sendBytes(context.workerAddress());
        String peer = new String(receiveBytes(), StandardCharsets.UTF_8);
        byte[] address = receiveBytes();
        this.endpoint = context.connect(address, peer);
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
