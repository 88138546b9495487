package io.github.dblock.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.knowm.xchart.XYChart;

/**
 * One curve of the run: its points (a series, an x, named values), the charts drawn from
 * them, the line that says how its cost grows, and how long it took.
 */
final class Curve {

	/** One measured point. */
	record Point(String series, double x, Map<String, Double> values, Map<String, String> notes) {

		double value(String name) {
			return this.values.getOrDefault(name, Double.NaN);
		}

	}

	/** Same-key re-acquisitions of a point: counted apart, in a table of their own, never charted. */
	record LocalRow(String series, double x, Measurement.LocalCycles local, long databaseCycles) {

	}

	final String id;

	final String title;

	final String xTitle;

	final String description;

	final List<Point> points = new ArrayList<>();

	final List<LocalRow> localRows = new ArrayList<>();

	final List<XYChart> charts = new ArrayList<>();

	String growth = "";

	double seconds;

	Curve(String id, String title, String xTitle, String description) {
		this.id = id;
		this.title = title;
		this.xTitle = xTitle;
		this.description = description;
	}

	Point add(String series, double x, Map<String, Double> values, Map<String, String> notes) {
		Point point = new Point(series, x, new LinkedHashMap<>(values), new LinkedHashMap<>(notes));
		this.points.add(point);
		return point;
	}

	Set<String> series() {
		Set<String> series = new LinkedHashSet<>();
		this.points.forEach((p) -> series.add(p.series()));
		return series;
	}

	/** A series' x and y values of one metric, for a chart. */
	double[][] xy(String series, String metric) {
		List<Point> of = this.points.stream().filter((p) -> p.series().equals(series)).toList();
		double[][] xy = new double[2][of.size()];
		for (int i = 0; i < of.size(); i++) {
			xy[0][i] = of.get(i).x();
			xy[1][i] = of.get(i).value(metric);
		}
		return xy;
	}

	/** Adds a line chart of metrics, one line per series and metric. */
	void chart(String title, String yTitle, boolean logX, String... metrics) {
		Map<String, double[][]> lines = new LinkedHashMap<>();
		for (String series : series()) {
			for (String metric : metrics) {
				double[][] xy = xy(series, metric);
				boolean any = false;
				for (double y : xy[1]) {
					any |= Double.isFinite(y);
				}
				if (any) {
					String name = series.isEmpty() ? metric : (metrics.length == 1) ? series : series + ": " + metric;
					lines.put(name, xy);
				}
			}
		}
		this.charts.add(Charts.lines(title, this.xTitle, yTitle, logX, lines));
	}

	/**
	 * How a cost grows along a series, from its first and last points: the exponent k of
	 * cost ~ x^k, named: flat (k below 0.15), sub-linear, linear (0.7 to 1.3), or worse.
	 */
	String growthOf(String series, String metric) {
		double[][] xy = xy(series, metric);
		int n = xy[0].length;
		if (n < 2 || !(xy[1][0] > 0) || !(xy[1][n - 1] > 0)) {
			return "not measured";
		}
		double k = Math.log(xy[1][n - 1] / xy[1][0]) / Math.log(xy[0][n - 1] / xy[0][0]);
		String name = (Math.abs(k) < 0.15) ? "flat" : (k < 0) ? "falling" : (k < 0.7) ? "sub-linear"
				: (k <= 1.3) ? "linear" : "worse than linear";
		return String.format("%s (x%.2f from %s to %s, exponent %.2f)", name, xy[1][n - 1] / xy[1][0],
				format(xy[0][0]), format(xy[0][n - 1]), k);
	}

	static String format(double x) {
		return (x == Math.rint(x)) ? String.format("%,d", (long) x) : String.format("%.2f", x);
	}

}
