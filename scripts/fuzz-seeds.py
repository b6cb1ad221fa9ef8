#!/usr/bin/env python3
"""Writes the seed corpus of the @FuzzTest targets (docs/reliability.md) into each module's
src/test/resources/<package>/<Class>Inputs/<method>/. Seeds of native structs are arena images:
pointer fields hold arena offsets (FuzzArena maps a value v != 0 to arena byte v mod 4096), so
4096 names offset 0. Run from the repository root; files it writes are committed; findings
the fuzzer adds (crash-*, kept inputs) sit beside them."""
import hashlib
import json
import os
import struct

SPAN = 4096


def put(module, package, cls, method, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(module, "src/test/resources", package.replace(".", "/"), cls + "Inputs", method)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + hashlib.sha1(data).hexdigest()[:12]), "wb") as f:
        f.write(data)


def image(size=SPAN):
    return bytearray(size)


def at(img, off, data):
    img[off:off + len(data)] = data


# --- DLPack ------------------------------------------------------------------------------------
def dl_tensor(img, t, ndim, code, bits, shape, strides=None, offset=0, device=(1, 0)):
    at(img, 2048, struct.pack("<%dq" % len(shape), *shape))
    if strides:
        at(img, 2560, struct.pack("<%dq" % len(strides), *strides))
    at(img, t, struct.pack("<QiiiBBHQQQ", 3072, device[0], device[1], ndim, code, bits, 1,
                           2048 if ndim else 0, 2560 if strides else 0, offset))


for versioned in (False, True):
    method = "versioned" if versioned else "legacy"
    for args in [(2, 2, 32, [3, 4]), (1, 0, 8, [16]), (0, 1, 64, []), (3, 2, 64, [2, 0, 5]),
                 (2, 2, 16, [2, 3], [1, 2]), (1, 5, 64, [4], None, 16), (2, 1, 16, [2, 2], None, 0, (2, 0))]:
        img = image(256)
        t = 32 if versioned else 0
        dl_tensor(img, t, *args)
        if versioned:
            at(img, 0, struct.pack("<IIQQQ", 1, 1, 0, 1, 1))   # version 1.1, ctx, deleter, READ_ONLY
        else:
            at(img, 48, struct.pack("<QQ", 0, 1))
        put("allocator-api", "io.datamem.dlpack", "DLPackImportFuzzTest", method, bytes(img))

# --- Py_buffer ---------------------------------------------------------------------------------
for extended in (False, True):
    method = "extended" if extended else "classic"
    for fmt, item, shape, strides, flags in [(b"<i", 4, [3, 4], [16, 4], 0), (b"d", 8, [10], None, 0),
                                             (b"T{<i:x:(2)d:y:}", 20, [2], [20], 0), (None, 1, [], None, 0),
                                             (b"B", 1, [2, 2], [-2, 1], 1)]:
        img = image(1024)
        ln = item
        for s in shape:
            ln *= s
        at(img, 0, struct.pack("<QQqqiiQQQQQ", 3072, 0, ln, item, 0, len(shape), 512 if fmt else 0,
                               600 if shape else 0, 700 if strides else 0, 0, 0))
        if fmt:
            at(img, 512, fmt + b"\0")
        at(img, 600, struct.pack("<%dq" % len(shape), *shape))
        if strides:
            at(img, 700, struct.pack("<%dq" % len(strides), *strides))
        if extended:
            at(img, 80, struct.pack("<iiQQ", 0x100000 if flags else 0, 0, 800 if flags else 0, 0))
            at(img, 800, b"cuda\0")
        put("allocator-api", "io.datamem.buffer", "PyBufferImportFuzzTest", method, bytes(img))

# --- format strings ----------------------------------------------------------------------------
# (already committed: FormatStringFuzzTestInputs)

# --- handler names -----------------------------------------------------------------------------
for n in ["default_allocator", "aligned64", "aligned4096+stats", "pool(aligned64)+guard", "numa:local+stats",
          "hugepages:2m,fallback=thp(aligned64)+stats", "hugepages(aligned64+stats)", "numa:interleave=all,populate",
          "pool(default_allocator)+stats+limit=1m+tracking", "hugepages", "numa(interleave)+stats",
          "aligned64+faults(rate=0.5)", "pool(aligned64, classes=64k)+limit(64k)", "thp+tracking=full",
          "aligned(64)+guard(pad=64)", "jfr+stats"]:
    put("allocator-impl", "io.datamem.impl", "HandlerNameFuzzTest", "createHandler", n)

# --- snapshot JSON -----------------------------------------------------------------------------
text = open("docs/observability.md").read()
start = text.index('```json\n{\n  "schema": "datamem-snapshot"') + len("```json\n")
doc = json.loads(text[start:text.index("```", start)])
put("allocator-impl", "io.datamem.impl.snapshot", "SnapshotJsonFuzzTest", "parse", json.dumps(doc))
put("allocator-impl", "io.datamem.impl.snapshot", "SnapshotJsonFuzzTest", "parse",
    json.dumps({"schema": "datamem-snapshot", "version": 1, "time": "2026-11-25T01:11:24Z", "processId": 1,
                "handlers": [{"name": "x", "version": 1, "layers": [
                    {"layer": "workspace", "type": "W", "currentCycleBytes": 1, "lastCycleBytes": 2,
                     "largestCycleBytes": 3, "regionBytes": 4, "cycles": 5, "spills": 6, "threads": 7},
                    {"layer": "placement", "type": "P", "mappings": [{"address": "0x1000", "byteSize": 1,
                     "mappedByteSize": 4096, "pageSize": 4096, "pages": "4k", "policy": "bind", "nodes": [0]}]},
                    {"layer": "other", "type": "O", "details": {"a": "b"}}]}]}))
put("allocator-impl", "io.datamem.impl.snapshot", "SnapshotJsonFuzzTest", "parse",
    '{"schema":"datamem-snapshot","version":1,"time":"2026-01-01T00:00:00.5Z","processId":7,"handlers":[]}')

# --- IPC handle --------------------------------------------------------------------------------
for pid, fd, mapping, off, size in [(4242, 7, 8192, 0, 4096), (1, 0, 1 << 30, 4096, 1 << 20), (99, 3, 4096, 4096, 0)]:
    put("allocator-impl", "io.datamem.impl.shared", "IpcHandleFuzzTest", "fromBytes",
        struct.pack("<iiqiiqqqqqq", 0x43504944, 1, pid, fd, 0, 0x0123456789ABCDEF, 0x0FEDCBA987654321, 99,
                    mapping, off, size))

# --- UCX remote region -------------------------------------------------------------------------
for owner, key in [(b"peer-a", bytes(range(40))), (b"", b""), ("n\u00f6de-1".encode(), b"\x01" * 7)]:
    put("allocator-ucx", "io.datamem.ucx", "RemoteRegionFuzzTest", "fromBytes",
        struct.pack("<ii", 0x55435852, len(owner)) + owner + struct.pack("<qqqi", 3, 0x7f0000001000, 65536,
                                                                           len(key)) + key)

# --- allocation log ----------------------------------------------------------------------------
put("examples", "io.datamem.examples.cli", "AllocationLogFuzzTest", "read",
    "# datamem allocation log 1\n# handler aligned64+log\n10 1 malloc 64 0x7f0000001000\n"
    "20 1 calloc 4 16 0x7f0000002000\n30 2 realloc 0x7f0000001000 64 128 0x7f0000003000\n"
    "40 2 free 0x7f0000003000 128\n50 1 free 0x7f0000002000 64\n")
put("examples", "io.datamem.examples.cli", "AllocationLogFuzzTest", "read",
    "# datamem allocation log 1\n5 3 malloc 0 0x0\n6 3 free 0x0 0\n")

# --- NEP 49 handler struct ---------------------------------------------------------------------
for name in [b"fuzz_handler", "h\u00e9".encode(), b"x" * 126]:
    img = image(256)
    at(img, 0, name + b"\0")
    img[127] = 1
    at(img, 128, struct.pack("<QQQQQ", 200, 1, 1, 1, 1))
    put("datamem-numpy", "io.datamem.numpy", "HandlerStructFuzzTest", "importHandler", bytes(img))

# --- Arrow C Data / C Device Data ----------------------------------------------------------------
def arrow(fmt, length, child_fmt=None, list_size=0, shape=None, device=None, offset=0):
    img = image(2048)
    at(img, 600, fmt + b"\0")
    meta = 0
    if shape is not None:
        k1, v1 = b"ARROW:extension:name", b"arrow.fixed_shape_tensor"
        k2, v2 = b"ARROW:extension:metadata", json.dumps({"shape": shape}).encode()
        blob = struct.pack("<i", 2)
        for s in (k1, v1, k2, v2):
            blob += struct.pack("<i", len(s)) + s
        at(img, 1024, blob)
        meta = 1024
    nchild = 1 if child_fmt else 0
    at(img, 0, struct.pack("<QQQqqQQQQ", 600, 0, meta, 2, nchild, 512 if nchild else 0, 0, 1, 0))
    at(img, 128, struct.pack("<qqqqqQQQQQ", length, 0, offset, 1 if child_fmt else 2, nchild, 528,
                             520 if nchild else 0, 0, 1, 0))
    at(img, 528, struct.pack("<QQ", 0, 3072))
    if child_fmt:
        at(img, 700, child_fmt + b"\0")
        at(img, 512, struct.pack("<Q", 256))
        at(img, 520, struct.pack("<Q", 384))
        at(img, 256, struct.pack("<QQQqqQQQQ", 700, 0, 0, 2, 0, 0, 0, 1, 0))
        at(img, 384, struct.pack("<qqqqqQQQQQ", length * list_size, 0, 0, 2, 0, 544, 0, 0, 1, 0))
        at(img, 544, struct.pack("<QQ", 0, 3072))
    if device:
        at(img, 208, struct.pack("<qiiQ", device[1], device[0], 0, 0))
    return bytes(img)


for dev in (False, True):
    method = "importDeviceArray" if dev else "importArray"
    d = (1, 0) if dev else None
    for img in [arrow(b"l", 10, device=d), arrow(b"f", 3, offset=1, device=d), arrow(b"b", 9, device=d),
                arrow(b"+w:4", 2, b"f", 4, [2, 2], device=d), arrow(b"+w:6", 1, b"s", 6, None, device=d),
                arrow(b"e", 0, device=d), arrow(b"g", 4, device=(2, 0) if dev else None)]:
        put("datamem-arrow", "io.datamem.arrow", "ArrowImportFuzzTest", method, img)
