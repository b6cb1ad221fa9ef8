/**
 * PEP 3118 format strings, as the buffer protocol and Python's {@code struct} module read them,
 * and the dtypes they describe: {@link io.datamem.format.FormatString} parses, renders and
 * compares formats and maps them to {@link io.datamem.array.DType}s;
 * {@link io.datamem.format.CustomDTypes} registers dtypes with custom spellings (the
 * {@code ml_dtypes} float8 family) and resolves them from formats and DLPack codes.
 *
 * <p>This package sits above {@code io.datamem.array} (it names {@code DType}); the buffer
 * protocol ({@code io.datamem.buffer}) below the arrays carries formats as strings and does not
 * use it.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so. Threading:
 * format strings are immutable; the custom dtype registry is thread-safe.
 */
package io.datamem.format;
