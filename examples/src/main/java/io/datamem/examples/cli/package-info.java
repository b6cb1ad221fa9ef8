/**
 * The {@code datamem} command line.
 */
package io.datamem.examples.cli;
