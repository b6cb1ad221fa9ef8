package io.datamem.ucx.internal;

import io.datamem.testing.NativeToolchain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.StructLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compiles {@code native/ucp_layout_probe.c} against Debian's UCX headers and compares every size,
 * offset and constant it prints with {@link UcpLayouts}.
 */
class UcpLayoutTest {

    private static final Path HEADER = Path.of("/usr/include/ucp/api/ucp.h");

    @Test
    void layoutsMatchTheHeaders(@TempDir Path dir) throws IOException {
        Path gcc = NativeToolchain.gcc();
        NativeToolchain.require(Files.isRegularFile(HEADER), HEADER + " (UCX's headers)", "libucx-dev");
        Path source = dir.resolve("ucp_layout_probe.c");
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("native/ucp_layout_probe.c")) {
            assertNotNull(in, "native/ucp_layout_probe.c");
            Files.write(source, in.readAllBytes());
        }
        Path exe = dir.resolve("probe");
        NativeToolchain.Result c = NativeToolchain.run(List.of(gcc.toString(), "-std=c11", "-Wall", "-Wextra", "-Werror",
                "-o", exe.toString(), source.toString()), null);
        assertEquals(0, c.exitCode(), c.output());
        NativeToolchain.Result r = NativeToolchain.run(List.of(exe.toString()), null);
        assertEquals(0, r.exitCode(), r.output());
        Map<String, Long> c2 = new HashMap<>();
        for (String line : r.output().strip().split("\n")) {
            String[] kv = line.strip().split(" ");
            c2.put(kv[0], Long.parseLong(kv[1]));
        }
        int compared = 0;
        compared += compare(c2, "ucp_params_t", UcpLayouts.PARAMS);
        compared += compare(c2, "ucp_worker_params_t", UcpLayouts.WORKER_PARAMS);
        compared += compare(c2, "ucp_ep_params_t", UcpLayouts.EP_PARAMS);
        compared += compare(c2, "ucp_mem_map_params_t", UcpLayouts.MEM_MAP_PARAMS);
        compared += compare(c2, "ucp_mem_attr_t", UcpLayouts.MEM_ATTR);
        compared += compare(c2, "ucp_worker_attr_t", UcpLayouts.WORKER_ATTR);
        compared += compare(c2, "ucp_request_param_t", UcpLayouts.REQUEST_PARAM);
        compared += compare(c2, "ucp_tag_recv_info_t", UcpLayouts.TAG_RECV_INFO);
        compared += compare(c2, "ucp_err_handler_t", UcpLayouts.ERR_HANDLER);
        assertEquals(c2.keySet().stream().filter(k -> k.contains("_t.")).count(), compared,
                "every size and offset the probe prints is compared");
        assertEquals(1, c2.get("UCP_API_MAJOR"));
        assertEquals(13, c2.get("UCP_API_MINOR"), "the bindings call ucp_init_version(1, 13)");
        assertEquals(UcpLayouts.UCS_ERR_MESSAGE_TRUNCATED, c2.get("UCS_ERR_MESSAGE_TRUNCATED"));
        assertEquals(UcpLayouts.UCS_INPROGRESS, c2.get("UCS_INPROGRESS"));
        assertEquals(UcpLayouts.UCS_ERR_LAST, c2.get("UCS_ERR_LAST"));
        assertEquals(UcpLayouts.UCS_ERR_CANCELED, c2.get("UCS_ERR_CANCELED"));
        assertEquals(UcpLayouts.UCS_ERR_CONNECTION_RESET, c2.get("UCS_ERR_CONNECTION_RESET"));
        assertEquals(UcpLayouts.UCS_ERR_UNREACHABLE, c2.get("UCS_ERR_UNREACHABLE"));
        assertEquals(io.datamem.ucx.UcxException.TIMED_OUT, c2.get("UCS_ERR_TIMED_OUT"));
        assertEquals(UcpLayouts.MEMORY_TYPE_HOST, c2.get("UCS_MEMORY_TYPE_HOST"));
        assertEquals(UcpLayouts.ERR_HANDLING_MODE_PEER, c2.get("UCP_ERR_HANDLING_MODE_PEER"));
        assertEquals(UcpLayouts.THREAD_MODE_SERIALIZED, c2.get("UCS_THREAD_MODE_SERIALIZED"));
        for (String bit : List.of("UCP_PARAM_FIELD_FEATURES", "UCP_PARAM_FIELD_MT_WORKERS_SHARED",
                "UCP_PARAM_FIELD_NAME", "UCP_FEATURE_TAG", "UCP_FEATURE_RMA", "UCP_WORKER_PARAM_FIELD_THREAD_MODE",
                "UCP_EP_PARAM_FIELD_REMOTE_ADDRESS", "UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE",
                "UCP_EP_PARAM_FIELD_ERR_HANDLER", "UCP_EP_PARAM_FIELD_NAME", "UCP_EP_CLOSE_FLAG_FORCE",
                "UCP_MEM_MAP_PARAM_FIELD_ADDRESS", "UCP_MEM_MAP_PARAM_FIELD_LENGTH", "UCP_MEM_MAP_PARAM_FIELD_FLAGS",
                "UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE", "UCP_MEM_MAP_ALLOCATE", "UCP_MEM_ATTR_FIELD_ADDRESS",
                "UCP_MEM_ATTR_FIELD_LENGTH", "UCP_OP_ATTR_FIELD_MEMH", "UCP_OP_ATTR_FIELD_FLAGS")) {
            assertEquals(c2.get(bit), javaBit(bit), bit);
        }
    }

    private static long javaBit(String c) {
        return switch (c) {
            case "UCP_PARAM_FIELD_FEATURES" -> UcpLayouts.PARAM_FIELD_FEATURES;
            case "UCP_PARAM_FIELD_MT_WORKERS_SHARED" -> UcpLayouts.PARAM_FIELD_MT_WORKERS_SHARED;
            case "UCP_PARAM_FIELD_NAME" -> UcpLayouts.PARAM_FIELD_NAME;
            case "UCP_FEATURE_TAG" -> UcpLayouts.FEATURE_TAG;
            case "UCP_FEATURE_RMA" -> UcpLayouts.FEATURE_RMA;
            case "UCP_WORKER_PARAM_FIELD_THREAD_MODE" -> UcpLayouts.WORKER_PARAM_FIELD_THREAD_MODE;
            case "UCP_EP_PARAM_FIELD_REMOTE_ADDRESS" -> UcpLayouts.EP_PARAM_FIELD_REMOTE_ADDRESS;
            case "UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE" -> UcpLayouts.EP_PARAM_FIELD_ERR_HANDLING_MODE;
            case "UCP_EP_PARAM_FIELD_ERR_HANDLER" -> UcpLayouts.EP_PARAM_FIELD_ERR_HANDLER;
            case "UCP_EP_PARAM_FIELD_NAME" -> UcpLayouts.EP_PARAM_FIELD_NAME;
            case "UCP_EP_CLOSE_FLAG_FORCE" -> UcpLayouts.EP_CLOSE_FLAG_FORCE;
            case "UCP_MEM_MAP_PARAM_FIELD_ADDRESS" -> UcpLayouts.MEM_MAP_PARAM_FIELD_ADDRESS;
            case "UCP_MEM_MAP_PARAM_FIELD_LENGTH" -> UcpLayouts.MEM_MAP_PARAM_FIELD_LENGTH;
            case "UCP_MEM_MAP_PARAM_FIELD_FLAGS" -> UcpLayouts.MEM_MAP_PARAM_FIELD_FLAGS;
            case "UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE" -> UcpLayouts.MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
            case "UCP_MEM_MAP_ALLOCATE" -> UcpLayouts.MEM_MAP_ALLOCATE;
            case "UCP_MEM_ATTR_FIELD_ADDRESS" -> UcpLayouts.MEM_ATTR_FIELD_ADDRESS;
            case "UCP_MEM_ATTR_FIELD_LENGTH" -> UcpLayouts.MEM_ATTR_FIELD_LENGTH;
            case "UCP_OP_ATTR_FIELD_MEMH" -> UcpLayouts.OP_ATTR_FIELD_MEMH;
            case "UCP_OP_ATTR_FIELD_FLAGS" -> UcpLayouts.OP_ATTR_FIELD_FLAGS;
            default -> throw new AssertionError(c);
        };
    }

    private static int compare(Map<String, Long> c, String struct, StructLayout layout) {
        assertEquals(c.get(struct + ".sizeof"), layout.byteSize(), struct + " size");
        int n = 1;
        for (Map.Entry<String, Long> e : c.entrySet()) {
            if (e.getKey().startsWith(struct + ".") && !e.getKey().endsWith(".sizeof")) {
                String field = e.getKey().substring(struct.length() + 1);
                assertTrue(layout.memberLayouts().stream().anyMatch(m -> m.name().orElse("").equals(field)),
                        struct + " has no field " + field + " in Java");
                assertEquals(e.getValue(), UcpLayouts.offsetOf(layout, field), struct + "." + field);
                n++;
            }
        }
        return n;
    }
}
