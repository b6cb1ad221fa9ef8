/**
 * The scratch device's C bindings ({@code aligned_alloc}, {@code free}), not exported. Uses no
 * other package of the module.
 */
package org.example.scratchdev.internal;
