/**
 * The scratch device's plumbing, not exported: its provider ({@code scratchdev}, found by
 * {@link java.util.ServiceLoader}) and its C bindings.
 */
package org.example.scratchdev.internal;
