/**
 * Implementation shared by datamem's modules through a qualified export. Not an API: anything here
 * may change without notice.
 */
package io.datamem.internal;
