package io.datamem.sycl;

import io.datamem.DataMem;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderTerm;
import io.datamem.sycl.internal.ClError;
import io.datamem.sycl.provider.SyclProvider;
import io.datamem.sycl.internal.UsmFunctions;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SYCL backend's logic that needs no OpenCL runtime: selectors, error names, kinds, terms, the
 * {@code device_info} record.
 */
class SyclLogicTest {

    // ---------------------------------------------------------------------------------------------
    // Filter selectors

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "opencl:gpu:0 | opencl:gpu:0",
            "opencl:cpu   | opencl:cpu",
            "gpu          | gpu",
            "gpu:1        | gpu:1",
            "opencl:2     | opencl:2",
            "0            | 0",
            "opencl       | opencl",
            "accelerator  | accelerator",
            "' gpu , cpu '| gpu,cpu",
            "default      | default"})
    void filterSelectorsParseAndPrintCanonically(String text, String canonical) {
        assertEquals(canonical, SyclSelector.parse(text).toString());
        assertEquals(SyclSelector.parse(text), SyclSelector.parse(canonical));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "''                  | expected: BACKEND:TYPE:NUMBER",
            "opencl:gpu:0:1      | has 4 parts",
            "gpu:opencl          | backend 'opencl' after another part",
            "0:gpu               | device type 'gpu' after the number",
            "level_zero:gpu:0    | backend 'level_zero' (expected: opencl",
            "cuda                | backend 'cuda'",
            "opencl::0           | empty part",
            "GPU                 | 'GPU' (expected: a backend",
            "gpu,                | an empty filter",
            "fpga                | 'fpga'",
            "99999999999         | a number below 2^31",
            "0:1                 | a second number"})
    void malformedSelectorsSayWhatIsWrong(String text, String fragment) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SyclSelector.parse(text));
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
        assertTrue(e.getMessage().startsWith("filter selector '" + text + "'") || text.isEmpty(), e.getMessage());
    }

    private static SyclDevice fake(int ordinal, SyclDevice.Type type, int typeOrdinal, boolean usm) {
        return new SyclDevice(ordinal, type, typeOrdinal, "dev" + ordinal, "vendor", "OpenCL 3.0", "1.0", "platform",
                usm, usm ? 15 : 0, usm ? 15 : 0, usm ? 15 : 0, 128, 1L << 30,
                MemorySegment.ofAddress(0x1000 + ordinal), MemorySegment.ofAddress(0x10));
    }

    private static final List<SyclDevice> DEVICES = List.of(
            fake(0, SyclDevice.Type.CPU, 0, true),
            fake(1, SyclDevice.Type.GPU, 0, false),
            fake(2, SyclDevice.Type.GPU, 1, true),
            fake(3, SyclDevice.Type.CPU, 1, false),
            fake(4, SyclDevice.Type.ACCELERATOR, 0, true));

    @ParameterizedTest
    @CsvSource({"opencl:gpu:0, 1", "gpu:1, 2", "gpu, 1", "opencl:cpu:1, 3", "cpu, 0", "3, 3", "opencl:4, 4",
            "accelerator, 4", "'gpu:5,cpu:1', 3", "default, 2"})
    void selectorsPickDevicesAsDpctlCountsThem(String selector, int ordinal) {
        assertEquals(ordinal, SyclSelector.parse(selector).select(DEVICES).orElseThrow().ordinal());
    }

    @Test
    void selectorsThatMatchNothingSelectNothing() {
        assertTrue(SyclSelector.parse("gpu:2").select(DEVICES).isEmpty());
        assertTrue(SyclSelector.parse("5").select(DEVICES).isEmpty());
        assertTrue(SyclSelector.parse("gpu").select(List.of()).isEmpty());
        assertEquals(3, SyclSelector.defaultSelector().select(List.of(fake(3, SyclDevice.Type.CPU, 0, false)))
                .orElseThrow().ordinal(), "without USM anywhere the default still names a device, to say why");
    }

    @Test
    void devicesKnowTheirFilterStringDlpackDeviceAndCapabilities() {
        SyclDevice d = DEVICES.get(2);
        assertEquals("opencl:gpu:1", d.filterString());
        assertEquals(new Device(DeviceType.ONE_API, 2), d.dlpackDevice());
        assertTrue(d.supports(UsmKind.SHARED));
        assertFalse(DEVICES.get(1).supports(UsmKind.DEVICE));
        assertThrows(IllegalArgumentException.class, () -> d.supports(UsmKind.UNKNOWN));
        assertThrows(IllegalArgumentException.class, () -> new SyclDevice(0, SyclDevice.Type.CPU, 0, "n", "v", "o",
                "d", "p", true, 0, 0, 0, 96, 0, MemorySegment.NULL, MemorySegment.NULL), "alignment 96");
        assertTrue(d.toString().contains("opencl:gpu:1 'dev2'"), d.toString());
    }

    // ---------------------------------------------------------------------------------------------
    // Kinds, pointer information, error names

    @Test
    void usmKindsMapToOpenClValuesAndDatamemKinds() {
        assertEquals(0x4197, UsmFunctions.clMemType(UsmKind.HOST));
        assertEquals(0x4198, UsmFunctions.clMemType(UsmKind.DEVICE));
        assertEquals(0x4199, UsmFunctions.clMemType(UsmKind.SHARED));
        assertEquals(0x4196, UsmFunctions.clMemType(UsmKind.UNKNOWN));
        for (UsmKind k : UsmKind.values()) {
            assertSame(k, UsmFunctions.usmKind(UsmFunctions.clMemType(k)));
        }
        assertSame(UsmKind.UNKNOWN, UsmFunctions.usmKind(0));
        assertEquals(MemoryKind.HOST_PINNED, UsmKind.HOST.memoryKind());
        assertEquals(MemoryKind.MANAGED, UsmKind.SHARED.memoryKind());
        assertEquals(MemoryKind.DEVICE, UsmKind.DEVICE.memoryKind());
        assertThrows(UnsupportedOperationException.class, UsmKind.UNKNOWN::memoryKind);
        assertEquals("shared", UsmKind.SHARED.dpctlName());
        assertSame(UsmKind.DEVICE, UsmKind.ofDpctlName("device"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UsmKind.ofDpctlName("unknown"));
        assertTrue(e.getMessage().contains("expected: host, shared or device"), e.getMessage());
        assertTrue(UsmKind.HOST.hostAccessible() && UsmKind.SHARED.hostAccessible());
        assertFalse(UsmKind.DEVICE.hostAccessible() || UsmKind.UNKNOWN.hostAccessible());
    }

    @Test
    void pointerInfoValidatesAndContainsItsRange() {
        UsmPointerInfo info = new UsmPointerInfo(UsmKind.DEVICE, 0x1000, 0x100, null);
        assertTrue(info.contains(0x1000));
        assertTrue(info.contains(0x10ff));
        assertFalse(info.contains(0x1100));
        assertFalse(info.contains(0xfff));
        assertTrue(new UsmPointerInfo(UsmKind.HOST, 0x2000, 0, null).contains(0x2000), "an empty block holds its base");
        assertFalse(UsmPointerInfo.UNKNOWN.contains(0));
        assertThrows(IllegalArgumentException.class, () -> new UsmPointerInfo(UsmKind.UNKNOWN, 0x10, 0, null));
        assertThrows(IllegalArgumentException.class, () -> new UsmPointerInfo(UsmKind.HOST, 0x10, -1, null));
        assertEquals("device allocation of 256 bytes at 0x1000", info.toString());
    }

    @ParameterizedTest
    @CsvSource({"0, CL_SUCCESS", "-1, CL_DEVICE_NOT_FOUND", "-5, CL_OUT_OF_RESOURCES", "-6, CL_OUT_OF_HOST_MEMORY",
            "-30, CL_INVALID_VALUE", "-61, CL_INVALID_BUFFER_SIZE", "-59, CL_INVALID_OPERATION",
            "-72, CL_MAX_SIZE_RESTRICTION_EXCEEDED", "-1001, CL_PLATFORM_NOT_FOUND_KHR",
            "-1094, CL_INVALID_ACCELERATOR_INTEL", "-1138, CL_INVALID_COMMAND_BUFFER_KHR",
            "-20, CL_UNKNOWN_ERROR_CODE", "7, CL_UNKNOWN_ERROR_CODE"})
    void openClErrorCodesHaveTheirNames(int code, String name) {
        assertEquals(name, ClError.name(code));
    }

    @Test
    void everyCoreErrorCodeHasItsOwnName() {
        Set<String> names = new HashSet<>();
        for (int code = 0; code >= -72; code--) {
            if (code <= -20 && code >= -29) {
                continue; // unassigned
            }
            String n = ClError.name(code);
            assertNotEquals("CL_UNKNOWN_ERROR_CODE", n, "code " + code);
            assertTrue(names.add(n), n + " twice");
        }
        assertTrue(ClError.isExhaustion(-5) && ClError.isExhaustion(-6) && ClError.isExhaustion(-4)
                && ClError.isExhaustion(-61));
        assertFalse(ClError.isExhaustion(-30));
        io.datamem.BackendException e = ClError.exception("sycl:device", 4096, "clDeviceMemAllocINTEL", -5, "detail");
        assertEquals("handler 'sycl:device': OpenCL clDeviceMemAllocINTEL failed with CL_OUT_OF_RESOURCES (-5) for 4096"
                + " bytes: detail", e.getMessage());
        assertEquals("CL_OUT_OF_RESOURCES", e.codeName());
    }

    // ---------------------------------------------------------------------------------------------
    // Handler names

    @ParameterizedTest
    @CsvSource({"sycl:host, HOST, default", "sycl:shared, SHARED, default", "sycl:device, DEVICE, default",
            "sycl:device:opencl:gpu:0, DEVICE, opencl:gpu:0", "sycl:shared:cpu, SHARED, cpu",
            "sycl:host:1, HOST, 1", "'sycl:device:gpu,cpu', DEVICE, 'gpu,cpu'"})
    void handlerTermsNameAKindAndASelector(String term, UsmKind kind, String selector) {
        SyclProvider.Parsed p = SyclProvider.parse(new ProviderTerm(term), term);
        assertEquals(kind, p.kind());
        assertEquals(selector, p.selector().toString());
        assertTrue(new SyclProvider().accepts(new ProviderTerm(term)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"sycl", "sycl:", "sycl:unknown", "sycl:texture", "sycl:device:", "sycl:device:vulkan",
            "sycl(aligned64)", "sycl:device:gpu:gpu"})
    void malformedTermsAreRejectedWithTheHandlerName(String term) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SyclProvider.parse(new ProviderTerm(term), "x+" + term));
        assertTrue(e.getMessage().startsWith("handler name 'x+" + term + "'"), e.getMessage());
    }

    @Test
    void theProviderListsItsNamesAndAnswersForItsFamilyOnly() {
        SyclProvider p = new SyclProvider();
        assertEquals(DataMemProvider.Role.LEAF, p.role());
        assertEquals(List.of("sycl:host[:SELECTOR]", "sycl:shared[:SELECTOR]", "sycl:device[:SELECTOR]"), p.names());
        assertFalse(p.accepts(new ProviderTerm("syclx")));
        assertFalse(p.accepts(new ProviderTerm("aligned64")));
        assertTrue(DataMemProvider.installed().stream().anyMatch(x -> x instanceof SyclProvider), "found by ServiceLoader");
    }

    @Test
    void availabilityAndHandlerResolutionAgree() {
        Availability a = new SyclProvider().availability();
        if (a.available()) {
            assertEquals(MemoryKind.MANAGED, DataMem.createHandler("sycl:shared").traits().kind());
        } else {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> DataMem.createHandler("sycl:shared"));
            assertTrue(e.getMessage().contains(a.reason()), e.getMessage());
            assertTrue(DataMem.describeProviders().contains(a.reason()));
        }
    }

    /** Runs a JVM whose ICD loader finds no driver, and checks the reason it gives. */
    @Test
    void withoutADriverTheProviderIsUnavailableAndSaysWhy(@TempDir Path emptyVendors) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), ProbeMain.class.getName());
        pb.environment().put("OCL_ICD_VENDORS", emptyVendors.toString());
        pb.redirectErrorStream(true);
        Process process = pb.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), out);
        assertTrue(out.startsWith("unavailable: no OpenCL ICD loader") || out.startsWith(
                "unavailable: no OpenCL platform: the ICD loader libOpenCL.so.1 found no driver (OCL_ICD_VENDORS="
                        + emptyVendors), out);
    }

    /** Prints the SYCL provider's availability (run in a child JVM). */
    public static final class ProbeMain {
        public static void main(String[] args) {
            System.out.println(new SyclProvider().availability());
            System.out.println(SyclQueue.availability(SyclSelector.parse("opencl:gpu"), UsmKind.DEVICE));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The buffer protocol's device_info

    private static final Device ONE_API_3 = new Device(DeviceType.ONE_API, 3);

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void syclDeviceInfoRoundTripsThroughItsNativeStruct(UsmKind kind) {
        SyclDeviceInfo info = new SyclDeviceInfo(ONE_API_3, kind, 0x10, 0x20, 0x30, 0x40);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = info.toNative(arena);
            assertEquals(64, s.byteSize());
            assertEquals(1, s.get(JAVA_INT, 0));
            assertEquals(64, s.get(JAVA_INT, 4));
            assertEquals(14, s.get(JAVA_INT, 8));
            assertEquals(3, s.get(JAVA_INT, 12));
            assertEquals(StandardDeviceInfo.kindCode(kind.memoryKind()), s.get(JAVA_INT, 16));
            assertEquals(0, s.get(JAVA_INT, 20));
            assertEquals(0x10, s.get(JAVA_LONG, 24), "queue where datamem_device_info_v1 has its stream");
            assertEquals(0x20, s.get(JAVA_LONG, 32));
            assertEquals(0x30, s.get(JAVA_LONG, 40));
            assertEquals(UsmFunctions.clMemType(kind), s.get(JAVA_INT, 48));
            assertEquals(SyclDeviceInfo.BACKEND_OPENCL, s.get(JAVA_INT, 52));
            assertEquals(0x40, s.get(JAVA_LONG, 56));
            assertEquals(info, SyclDeviceInfo.fromNative(MemorySegment.ofAddress(s.address())));
            assertEquals(new StandardDeviceInfo(ONE_API_3, kind.memoryKind(), 0x10, 0x20, 0x30),
                    StandardDeviceInfo.fromNative(s));
            assertEquals(info.toStandard(), StandardDeviceInfo.fromNative(s));
        }
        assertEquals(1, info.version());
        assertEquals("opencl", info.backend());
        assertTrue(info.toString().contains("USM " + kind.dpctlName()), info.toString());
    }

    @Test
    void syclDeviceInfoRejectsWhatIsNotUsmMemoryOfAnOpenClContext() {
        assertThrows(IllegalArgumentException.class,
                () -> new SyclDeviceInfo(new Device(DeviceType.CUDA, 0), UsmKind.DEVICE, 1, 2, 3, 4));
        assertThrows(IllegalArgumentException.class, () -> new SyclDeviceInfo(ONE_API_3, UsmKind.UNKNOWN, 1, 2, 3, 4));
        assertThrows(IllegalArgumentException.class, () -> new SyclDeviceInfo(ONE_API_3, UsmKind.DEVICE, 1, 0, 3, 4));
        assertThrows(IllegalArgumentException.class, () -> new SyclDeviceInfo(ONE_API_3, UsmKind.DEVICE, 1, 2, 0, 4));
        assertThrows(NullPointerException.class, () -> new SyclDeviceInfo(null, UsmKind.DEVICE, 1, 2, 3, 4));
        assertThrows(IllegalArgumentException.class, () -> SyclDeviceInfo.fromNative(MemorySegment.NULL));
        SyclDeviceInfo good = new SyclDeviceInfo(ONE_API_3, UsmKind.SHARED, 1, 2, 3, 4);
        record Corruption(long offset, int value, String message) {
        }
        for (Corruption c : List.of(new Corruption(0, 0, "version 0"), new Corruption(4, 48, "byte_size 48"),
                new Corruption(48, 0x4196, "usm_kind: 0x4196"), new Corruption(16, 3, "memory_kind: 3"),
                new Corruption(52, 2, "backend: 2"), new Corruption(8, 2, "kDLOneAPI"))) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment s = good.toNative(arena);
                s.set(JAVA_INT, c.offset(), c.value());
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> SyclDeviceInfo.fromNative(s));
                assertTrue(e.getMessage().contains(c.message()), e.getMessage());
            }
        }
    }

    @Test
    void theProviderGivesNoHookForOtherDevices() {
        SyclProvider p = new SyclProvider();
        assertTrue(p.interchangeFor(Device.CPU).isEmpty());
        assertTrue(p.interchangeFor(new Device(DeviceType.CUDA, 0)).isEmpty());
        assertTrue(p.interchangeFor(new Device(DeviceType.ONE_API, 1 << 20)).isEmpty(),
                "no OpenCL device has that ordinal (or there is no runtime)");
    }
}
