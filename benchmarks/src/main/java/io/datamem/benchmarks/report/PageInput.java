package io.datamem.benchmarks.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SequencedMap;

/**
 * What a page is rendered from: the run's results, its machine and how the run went; and where its
 * charts go, with the names of those written so far.
 */
final class PageInput {

    private final List<Result> results;
    private final Machine machine;
    private final Report.Run run;
    private final Path chartDir;
    private final String chartLink;
    private final List<String> charts = new ArrayList<>();

    PageInput(List<Result> results, Machine machine, Report.Run run, Path chartDir, String chartLink) {
        this.results = List.copyOf(results);
        this.machine = machine;
        this.run = run;
        this.chartDir = chartDir;
        this.chartLink = chartLink;
    }

    /** The results of the run. */
    List<Result> results() {
        return results;
    }

    /** The machine the run was on. */
    Machine machine() {
        return machine;
    }

    /** How the run went. */
    Report.Run run() {
        return run;
    }

    /** The chart files written so far, by name, in the order they were written. */
    List<String> charts() {
        return charts;
    }

    /**
     * Draws a chart into the chart directory and returns the Markdown that shows it, or a line
     * saying why there is no chart (nothing finite to draw).
     *
     * @throws UncheckedIOException if the file cannot be written
     */
    String chart(Charts.Kind kind, String file, String title, String xTitle, String yTitle,
                         List<String> categories, SequencedMap<String, double[]> series, boolean logY) {
        try {
            Charts.draw(kind, title, xTitle, yTitle, categories, series, logY, chartDir.resolve(file));
        } catch (IllegalArgumentException e) {
            return "_No chart: " + e.getMessage() + "._\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        charts.add(file);
        return "\n![" + title + "](" + chartLink + "/" + file + ")\n";
    }
}
