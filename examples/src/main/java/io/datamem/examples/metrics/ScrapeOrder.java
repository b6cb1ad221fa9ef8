package io.datamem.examples.metrics;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts the bucket series of Prometheus scrape text in numeric order. A Prometheus registry sorts
 * the series of a family by their label values as strings ({@code le="+Inf"}, {@code "1023"},
 * {@code "1073741823"}, {@code "16383"}, ...); a Prometheus server does not care, a person reading the
 * text does. Series without an {@code le} label, and the order of the families, are left as they are.
 */
final class ScrapeOrder {

    private static final Pattern LE = Pattern.compile("([{,])le=\"([^\"]*)\"");

    private ScrapeOrder() {
    }

    /**
     * The same text, each family's series sorted by their other labels, then by {@code le} as a
     * number ({@code +Inf} last).
     *
     * @param scrape Prometheus's text format
     * @return the text with the series of each family in that order
     * @throws NumberFormatException if an {@code le} value is neither a number nor {@code +Inf}
     */
    static String bucketsInNumericOrder(String scrape) {
        StringBuilder out = new StringBuilder(scrape.length());
        List<String> family = new ArrayList<>();
        String familyName = null;
        for (String line : scrape.split("\n", -1)) {
            String name = line.startsWith("#") || line.isEmpty() ? null : metricName(line);
            if (name == null || !name.equals(familyName)) {
                flush(family, out);
                familyName = name;
            }
            if (name == null) {
                out.append(line).append('\n');
            } else {
                family.add(line);
            }
        }
        flush(family, out);
        out.setLength(out.length() - 1);   // the split gave one line more than the text ends with
        return out.toString();
    }

    private static String metricName(String sample) {
        int end = 0;
        while (end < sample.length() && sample.charAt(end) != '{' && sample.charAt(end) != ' ') {
            end++;
        }
        return sample.substring(0, end);
    }

    private static void flush(List<String> family, StringBuilder out) {
        if (family.stream().anyMatch(l -> LE.matcher(l).find())) {
            family.sort(Comparator.comparing(ScrapeOrder::otherLabels).thenComparingDouble(ScrapeOrder::bound));
        }
        family.forEach(l -> out.append(l).append('\n'));
        family.clear();
    }

    /** The series' name and labels without {@code le} (and without the value). */
    private static String otherLabels(String sample) {
        int end = sample.indexOf('}');
        return LE.matcher(end < 0 ? sample : sample.substring(0, end + 1)).replaceFirst("$1");
    }

    private static double bound(String sample) {
        Matcher m = LE.matcher(sample);
        if (!m.find()) {
            return Double.NEGATIVE_INFINITY;
        }
        return m.group(2).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(m.group(2));
    }
}
