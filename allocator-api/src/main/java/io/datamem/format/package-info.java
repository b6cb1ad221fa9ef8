/**
 * PEP 3118 format strings, as the buffer protocol and Python's {@code struct} module read them,
 * and the dtypes they describe: {@link io.datamem.format.FormatString} parses formats (failing
 * with a {@link io.datamem.format.FormatException} that names the position), gives their item
 * size and alignment, renders and compares them, and maps them to {@link io.datamem.array.DType}s;
 * {@link io.datamem.format.CustomDTypes} registers dtypes with custom spellings (the
 * {@code ml_dtypes} float8 family) and resolves them from formats and DLPack codes. The parse
 * tree (fields, offsets, modes, spellings) is the package's own and not exported.
 *
 * <p>This package sits above {@code io.datamem.array} (it names {@code DType}); the buffer
 * protocol ({@code io.datamem.buffer}) below the arrays carries formats as strings and does not
 * use it.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so. Threading:
 * format strings are immutable; the custom dtype registry is thread-safe.
 */
package io.datamem.format;
