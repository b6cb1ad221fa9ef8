/**
 * Providers and other implementation details of {@code io.datamem.impl}. Not an API.
 */
package io.datamem.impl.os;
