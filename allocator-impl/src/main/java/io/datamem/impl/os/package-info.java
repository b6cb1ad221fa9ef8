/**
 * Plumbing shared by the feature packages of {@code io.datamem.impl} and its providers: Linux
 * memory calls ({@link io.datamem.impl.os.LinuxMemory}), the checks for optional modules
 * ({@link io.datamem.impl.os.OptionalModules}). Terms and their options are read by the SPI's
 * {@code io.datamem.spi.ProviderTerm}. Not exported; not an API. It imports nothing from the rest of the module.
 */
package io.datamem.impl.os;
