/**
 * Plumbing shared by the feature packages of {@code io.datamem.impl} and its providers: Linux
 * memory calls ({@link io.datamem.impl.os.LinuxMemory}), the checks for optional modules
 * ({@link io.datamem.impl.os.OptionalModules}), and the parsing of byte sizes and term options
 * ({@link io.datamem.impl.os.ByteSizes}, {@link io.datamem.impl.os.TermOptions}). Not exported; not
 * an API. It imports nothing from the rest of the module.
 */
package io.datamem.impl.os;
