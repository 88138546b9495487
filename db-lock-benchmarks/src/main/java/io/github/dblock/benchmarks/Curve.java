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
	 * How a cost grows along a series: the exponent k of cost ~ x^k, fitted by least squares
	 * on the logarithms of every point, named flat (|k| below 0.15, or the last point within
	 * x0.67 to x1.5 of the first), sub-linear, linear (0.7 to 1.3), worse than linear, or
	 * falling; with the ratio of the last point to the first.
	 */
	String growthOf(String series, String metric) {
		double[][] xy = xy(series, metric);
		double sx = 0;
		double sy = 0;
		double sxx = 0;
		double sxy = 0;
		int n = 0;
		double first = Double.NaN;
		double last = Double.NaN;
		double firstX = Double.NaN;
		double lastX = Double.NaN;
		for (int i = 0; i < xy[0].length; i++) {
			if (xy[1][i] > 0 && xy[0][i] > 0) {
				double lx = Math.log(xy[0][i]);
				double ly = Math.log(xy[1][i]);
				sx += lx;
				sy += ly;
				sxx += lx * lx;
				sxy += lx * ly;
				n++;
				if (Double.isNaN(first)) {
					first = xy[1][i];
					firstX = xy[0][i];
				}
				last = xy[1][i];
				lastX = xy[0][i];
			}
		}
		if (n < 2 || sxx * n == sx * sx) {
			return "not measured";
		}
		double k = (n * sxy - sx * sy) / (n * sxx - sx * sx);
		double ratio = last / first;
		String name = (Math.abs(k) < 0.15 || (ratio >= 0.67 && ratio <= 1.5)) ? "flat" : (k < 0) ? "falling"
				: (k < 0.7) ? "sub-linear" : (k <= 1.3) ? "linear" : "worse than linear";
		return String.format("%s (x%.2f from %s to %s, fitted exponent %.2f)", name, ratio, format(firstX), format(lastX),
				k);
	}

	static String format(double x) {
		return (x == Math.rint(x)) ? String.format("%,d", (long) x) : String.format("%.2f", x);
	}

}
