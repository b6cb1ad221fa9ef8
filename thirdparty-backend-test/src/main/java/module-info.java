import org.example.scratchdev.provider.ScratchProvider;

/**
 * The scratch device: a pretend accelerator written by a third party against datamem's exported
 * API only. Its "device memory" is host memory it allocates itself from the C library (through the
 * JDK's {@code java.lang.foreign}), which it reports as device memory the host cannot touch, on
 * {@code (kDLExtDev, N)}, with its own export hook.
 *
 * <p>Native access: this module calls the C library. Run with
 * {@code --enable-native-access=org.example.scratchdev} (module path) or
 * {@code --enable-native-access=ALL-UNNAMED} (class path).
 */
module org.example.scratchdev {
    requires transitive io.datamem.api;

    exports org.example.scratchdev;

    provides io.datamem.spi.DataMemProvider with ScratchProvider;
}
