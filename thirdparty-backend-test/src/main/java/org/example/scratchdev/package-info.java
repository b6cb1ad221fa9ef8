/**
 * The scratch device, a pretend accelerator backend for datamem written against its exported API
 * only (module {@code io.datamem.api}, no internal package): {@link org.example.scratchdev.ScratchDevice}
 * (the device, its block table and copies), {@link org.example.scratchdev.ScratchAllocator} (its
 * {@code DataMemAllocator}) and {@link org.example.scratchdev.ScratchInterchange} (its
 * {@code DeviceInterchange} and {@code BufferDeviceHook}). Handler names: {@code scratchdev}
 * (device 0) and {@code scratchdev:N} (device N, 0 to 3).
 */
package org.example.scratchdev;
