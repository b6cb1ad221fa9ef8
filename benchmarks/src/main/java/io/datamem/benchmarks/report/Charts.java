package io.datamem.benchmarks.report;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.style.Styler;

import java.awt.Color;
import java.awt.Font;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import javax.imageio.ImageIO;

/**
 * PNG charts of the report, drawn with XChart (headless).
 */
public final class Charts {

    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e), new Color(0x9467bd),
        new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f), new Color(0xbcbd22), new Color(0x17becf),
        new Color(0x393b79), new Color(0xad494a), new Color(0x637939), new Color(0x843c39), new Color(0x5254a3),
    };

    private Charts() {
    }

    /** The kind of chart. */
    public enum Kind {
        /** One line per series across the categories. */
        LINES,
        /** Bars grouped by category, one bar per series. */
        BARS
    }

    /**
     * Draws a chart of series over categories and writes it as a PNG.
     *
     * @param kind       lines or bars
     * @param title      the chart's title
     * @param xTitle     the categories' axis title
     * @param yTitle     the values' axis title
     * @param categories the categories, in order
     * @param series     each series' values, one per category (NaN: not measured)
     * @param logY       whether the value axis is logarithmic
     * @param out        the PNG file to write
     * @throws IOException              if it cannot be written
     * @throws IllegalArgumentException if a series has not one value per category, or there is
     *                                  nothing to draw
     */
    public static void draw(Kind kind, String title, String xTitle, String yTitle, List<String> categories,
                            SequencedMap<String, double[]> series, boolean logY, Path out) throws IOException {
        int width = kind == Kind.LINES ? 1000 : 900;
        CategoryChart chart = new CategoryChartBuilder().width(width).height(560).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        var styler = chart.getStyler();
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotBackgroundColor(Color.WHITE);
        styler.setPlotBorderVisible(false);
        styler.setLegendPosition(Styler.LegendPosition.OutsideE);
        styler.setLegendBorderColor(Color.WHITE);
        styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        styler.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        styler.setSeriesColors(PALETTE);
        styler.setYAxisLogarithmic(logY);
        styler.setYAxisDecimalPattern(logY ? "#,##0.#" : "#,##0.##");
        styler.setAvailableSpaceFill(0.8);
        styler.setOverlapped(kind == Kind.LINES);   // lines: every point at its category's centre
        if (kind == Kind.LINES) {
            styler.setDefaultSeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Line);
            styler.setMarkerSize(7);
        } else {
            styler.setDefaultSeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Bar);
        }
        int drawn = 0;
        for (Map.Entry<String, double[]> e : series.entrySet()) {
            double[] v = e.getValue();
            if (v.length != categories.size()) {
                throw new IllegalArgumentException("series " + e.getKey() + " has " + v.length + " values (expected: "
                        + categories.size() + ", one per category)");
            }
            List<String> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (int i = 0; i < v.length; i++) {
                if (Double.isFinite(v[i]) && (!logY || v[i] > 0)) {
                    x.add(categories.get(i));
                    y.add(v[i]);
                } else {
                    x.add(categories.get(i));
                    y.add(null);
                }
            }
            if (y.stream().anyMatch(d -> d != null)) {
                chart.addSeries(e.getKey(), x, y);
                drawn++;
            }
        }
        if (drawn == 0) {
            throw new IllegalArgumentException("chart '" + title + "': no value to draw");
        }
        Files.createDirectories(out.toAbsolutePath().getParent());
        BufferedImage image = BitmapEncoder.getBufferedImage(chart);
        if (!ImageIO.write(image, "png", out.toFile())) {
            throw new IOException("no PNG writer in this JDK");
        }
    }
}
