/**
 * The scratch device's provider ({@code scratchdev}, found by {@link java.util.ServiceLoader}),
 * on top of the module's other packages; not exported.
 */
package org.example.scratchdev.provider;
