/**
 * Plumbing shared by the feature packages of {@code io.datamem.impl} and its providers: Linux
 * memory calls ({@link io.datamem.impl.os.LinuxMemory}), the checks for optional modules
 * ({@link io.datamem.impl.os.OptionalModules}), the table of an allocator's live blocks
 * ({@link io.datamem.impl.os.LiveBlocks}), which the device backends use too, hwloc's handle on
 * this machine and its binding calls ({@link io.datamem.impl.os.HwlocBinding}), what a NUMA node
 * has left for bound memory ({@link io.datamem.impl.os.NodeMemory}), and the spellings
 * of page sizes, node lists and PCI bus ids in messages ({@link io.datamem.impl.os.Spellings}). Terms and their
 * options are read by the SPI's {@code io.datamem.spi.ProviderTerm}. Not an API: exported only to
 * {@code io.datamem.cuda} and {@code io.datamem.sycl} (a qualified export). It imports nothing from
 * the rest of the module.
 */
package io.datamem.impl.os;
