/**
 * Allocation metrics of datamem handlers exposed through Micrometer registries a user would run.
 */
package io.datamem.examples.metrics;
