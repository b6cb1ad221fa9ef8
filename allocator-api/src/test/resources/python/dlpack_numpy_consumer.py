"""NumPy (>= 2.1) as the consumer of DLManagedTensorVersioned structs datamem exported.

A JVM's memory cannot be handed to another process, so DLPackNumPyTest writes, for every case,
the fields of the tensor datamem's DLPack.toDLPack wrote (version, flags, device, dtype, shape,
strides, byte_offset), read back from the native struct, and the bytes its data pointer reaches.
This script rebuilds the same struct with ctypes over a copy of those bytes (the same offsets from
the data pointer), wraps it in a "dltensor_versioned" PyCapsule, and lets np.from_dlpack import it
through an object's __dlpack__: NumPy then reads the fields exactly as datamem set them.

The other way, "export" asks NumPy's own __dlpack__ (max_version given on the command line) for
tensors of a few arrays and views, and prints every field of the DLManagedTensorVersioned NumPy
wrote, and the bytes its data pointer reaches, in the same case format, for datamem to import;
then calls NumPy's deleter.

Usage: dlpack_numpy_consumer.py probe                 prints the max_version NumPy passes to __dlpack__
       dlpack_numpy_consumer.py CASEFILE              imports every case; prints OK/FAIL lines
       dlpack_numpy_consumer.py export MAJOR MINOR    prints NumPy's exports as cases
"""
import ctypes
import gc
import sys

import numpy as np


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

deleted = []


@DELETER
def deleter(self):
    deleted.append(ctypes.addressof(self.contents))


class Producer:
    """An object with __dlpack__, as a Python binding of datamem would be."""

    def __init__(self, capsule, device):
        self.capsule = capsule
        self.device = device
        self.kwargs = None

    def __dlpack__(self, **kwargs):
        self.kwargs = kwargs
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def probe():
    class Probe:
        def __dlpack__(self, **kwargs):
            print("max_version %d %d" % tuple(kwargs.get("max_version") or (0, 0)))
            raise BufferError("probe only")

        def __dlpack_device__(self):
            return (1, 0)

    try:
        np.from_dlpack(Probe())
    except BufferError:
        pass


def parse(path):
    cases, case = [], None
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            key, rest = words[0], words[1:]
            if key == "case":
                case = {"name": rest[0]}
            elif key == "end":
                cases.append(case)
            elif key in ("numpy_dtype", "strides", "bytes") and rest and rest[0] in ("NULL", "-"):
                case[key] = None
            elif key in ("numpy_dtype",):
                case[key] = rest[0]
            elif key == "bytes":
                case[key] = bytes.fromhex(rest[0]) if rest else b""
            elif key == "values":
                case[key] = [float(v) for v in rest]
            else:
                case[key] = [int(v) for v in rest]
    return cases


def consume(case):
    name = case["name"]
    ndim = case["ndim"][0]
    shape = case["shape"]
    strides = case["strides"]
    raw = case["bytes"]
    keep = []
    m = DLManagedTensorVersioned()
    m.version.major, m.version.minor = case["version"]
    m.flags = case["flags"][0]
    m.deleter = deleter
    t = m.dl_tensor
    t.device.device_type, t.device.device_id = case["device"]
    t.ndim = ndim
    t.dtype.code, t.dtype.bits, t.dtype.lanes = case["dtype"]
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    keep.append(shape_arr)
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    if strides is not None:
        strides_arr = (ctypes.c_int64 * max(ndim, 1))(*strides)
        keep.append(strides_arr)
        t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    if case["data_null"][0]:
        t.data = None
        buf_address = 0
    else:
        buf = ctypes.create_string_buffer(raw, max(len(raw), 1))
        keep.append(buf)
        buf_address = ctypes.addressof(buf)
    # the bytes start at the lowest element; element 0 is -lowest bytes on, at data + byte_offset
    element0 = buf_address - case.get("lowest", [0])[0] if buf_address else 0
    if buf_address:
        t.data = element0 - case["byte_offset"][0]
    t.byte_offset = case["byte_offset"][0]
    capsule = PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)
    producer = Producer(capsule, tuple(case["device"]))
    before = len(deleted)

    arr = np.from_dlpack(producer)
    problems = []
    if producer.kwargs.get("max_version") is None:
        problems.append("NumPy passed no max_version")
    if tuple(arr.shape) != tuple(shape):
        problems.append("shape %s, expected %s" % (arr.shape, shape))
    if str(arr.dtype) != case["numpy_dtype"]:
        problems.append("dtype %s, expected %s" % (arr.dtype, case["numpy_dtype"]))
    expected_strides = tuple(s * arr.itemsize for s in strides) if strides is not None else None
    if expected_strides is not None and arr.size > 1:
        significant = tuple(s for s, n in zip(arr.strides, arr.shape) if n > 1)
        wanted = tuple(s for s, n in zip(expected_strides, shape) if n > 1)
        if significant != wanted:
            problems.append("strides %s, expected %s (bytes)" % (arr.strides, expected_strides))
    read_only = bool(case["flags"][0] & 1)
    if arr.flags.writeable == read_only:
        problems.append("writeable %s for flags %d" % (arr.flags.writeable, case["flags"][0]))
    if arr.size > 0 and arr.ctypes.data != element0:
        problems.append("NumPy copied: data at 0x%x, the tensor's element 0 at 0x%x"
                        % (arr.ctypes.data, element0))
    values = [float(v) for v in np.ravel(arr, order="C").tolist()]
    if values != case["values"]:
        problems.append("values %s, expected %s" % (values, case["values"]))
    summary = "shape=%s strides=%s writeable=%s version=%d.%d" % (
        tuple(arr.shape), arr.strides, arr.flags.writeable, case["version"][0], case["version"][1])
    del arr
    gc.collect()
    if len(deleted) != before + 1 or deleted[-1] != ctypes.addressof(m):
        problems.append("deleter called %d time(s)" % (len(deleted) - before))
    keep.clear()
    if problems:
        print("FAIL %s: %s" % (name, "; ".join(problems)))
        return False
    print("OK %s %s" % (name, summary))
    return True


PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
PyCapsule_GetPointer.restype = ctypes.c_void_p
PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
PyCapsule_SetName = ctypes.pythonapi.PyCapsule_SetName
PyCapsule_SetName.restype = ctypes.c_int
PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


def export(max_version):
    base = np.arange(20, dtype=np.float64).reshape(4, 5)
    ro = np.arange(6, dtype=np.int32)
    ro.flags.writeable = False
    arrays = {
        "numpy-float64-c-contiguous": base,
        "numpy-float64-transposed": base.T,
        "numpy-float64-reversed": base[::-1, ::-2],
        "numpy-int32-read-only": ro,
        "numpy-uint8-0d": np.array(7, dtype=np.uint8),
        "numpy-int16-zero-size": np.zeros((0, 3), dtype=np.int16),
    }
    for name, arr in arrays.items():
        capsule = arr.__dlpack__(max_version=max_version)
        m = ctypes.cast(PyCapsule_GetPointer(capsule, b"dltensor_versioned"),
                        ctypes.POINTER(DLManagedTensorVersioned)).contents
        t = m.dl_tensor
        shape = [t.shape[i] for i in range(t.ndim)]
        strides = None if not t.strides else [t.strides[i] for i in range(t.ndim)]
        item = (t.dtype.bits * t.dtype.lanes + 7) // 8
        raw = b""
        if t.data and arr.size > 0:
            steps = strides if strides is not None else list(np.array(arr.strides) // item)
            lo = sum(s * (n - 1) for s, n in zip(steps, shape) if s < 0) * item
            hi = sum(s * (n - 1) for s, n in zip(steps, shape) if s > 0) * item
            # bytes from the data pointer (plus byte_offset plus the lowest element) to the highest
            start = t.byte_offset + lo
            raw = ctypes.string_at(t.data + start, hi - lo + item)
            print("case %s" % name)
            print("lowest %d" % lo)
        else:
            print("case %s" % name)
            print("lowest 0")
        print("version %d %d" % (m.version.major, m.version.minor))
        print("flags %d" % m.flags)
        print("device %d %d" % (t.device.device_type, t.device.device_id))
        print("ndim %d" % t.ndim)
        print("dtype %d %d %d" % (t.dtype.code, t.dtype.bits, t.dtype.lanes))
        print("shape" + "".join(" %d" % v for v in shape))
        print("strides" + (" NULL" if strides is None else "".join(" %d" % v for v in strides)))
        print("byte_offset %d" % t.byte_offset)
        print("data_null %d" % (0 if t.data else 1))
        print("bytes " + raw.hex())
        print("values" + "".join(" %r" % float(v) for v in np.ravel(arr, order="C").tolist()))
        print("end")
        # As a consumer does: mark the capsule used (so that its destructor leaves the tensor
        # alone), then call the deleter once.
        PyCapsule_SetName(capsule, b"used_dltensor_versioned")
        if m.deleter:
            m.deleter(ctypes.byref(m))
    print("numpy %s" % np.__version__)


def main():
    if sys.argv[1] == "probe":
        probe()
        return 0
    if sys.argv[1] == "export":
        export((int(sys.argv[2]), int(sys.argv[3])))
        return 0
    ok = True
    for case in parse(sys.argv[1]):
        try:
            ok = consume(case) and ok
        except Exception as e:  # noqa: BLE001 - reported per case
            print("FAIL %s: %s: %s" % (case["name"], type(e).__name__, e))
            ok = False
    print("numpy %s" % np.__version__)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
