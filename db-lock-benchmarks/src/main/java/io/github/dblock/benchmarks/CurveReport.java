package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The curves of a run, per database: {@code curves-<database>.md} (the tables, the growth
 * lines, the pictures, headed with the machine, the database, the load average and the
 * command), {@code curves-<database>.csv} (one value a line) and a PNG of line charts per
 * curve, {@code <curve>-<database>.png} (XChart); a full run's names end in {@code -full}.
 */
final class CurveReport {

	private final Machine machine;

	private final BenchSettings settings;

	private final List<Curve> curves;

	private final boolean full;

	CurveReport(Machine machine, BenchSettings settings, List<Curve> curves, boolean full) {
		this.machine = machine;
		this.settings = settings;
		this.curves = curves;
		this.full = full;
	}

	/** The command that reproduces this run. */
	String command() {
		String env = this.settings.postgresql()
				? "DB_LOCK_BENCH_URL=" + this.settings.url() + " DB_LOCK_BENCH_USER=" + this.settings.user() + " "
				: this.settings.url().equals(BenchSettings.DEFAULT_URL) ? ""
						: "DB_LOCK_BENCH_URL=" + this.settings.url() + " ";
		return env + Report.COMMAND + (this.full ? " -Dbench.full" : "");
	}

	void write(Path folder) throws IOException {
		Files.createDirectories(folder);
		for (Curve curve : this.curves) {
			if (!curve.charts.isEmpty()) {
				curve.charts.forEach((chart) -> chart.setTitle(this.machine.databaseShort() + ": " + chart.getTitle()));
				Charts.write(curve.charts, 2, folder.resolve(curve.id + "-" + suffix() + ".png"));
			}
		}
		String markdown = markdown();
		System.out.println();
		System.out.println(markdown);
		Files.writeString(folder.resolve("curves-" + suffix() + ".md"), markdown);
		Files.writeString(folder.resolve("curves-" + suffix() + ".csv"), csv().csv());
	}

	/** The database's short name, and {@code -full} for a full run: so that a full run keeps the default's files. */
	String suffix() {
		return this.settings.databaseName() + (this.full ? "-full" : "");
	}

	String markdown() {
		String database = suffix();
		StringBuilder out = new StringBuilder();
		out.append("### How db-lock's cost grows: ").append(this.machine.databaseShort()).append(" (").append(this.machine.date())
			.append(")\n\n");
		out.append("Machine: ").append(this.machine.summary())
			.append(this.machine.load().isEmpty() ? "" : "; " + this.machine.load())
			.append(" (other builds ran on the machine at the same time).  \n");
		out.append(String.format("%s run; %.1f s measured per point. Latencies are HdrHistogram percentiles. "
				+ "Reproduce: `%s`.%n%n", this.full ? "Full" : "Default", pointSeconds(), command()));
		for (Curve curve : this.curves) {
			out.append("#### ").append(curve.title).append("\n\n");
			out.append(curve.description).append(String.format(" Took %.0f s.%n%n", curve.seconds));
			if (!curve.charts.isEmpty()) {
				out.append("![").append(curve.title).append("](").append(curve.id).append('-').append(database)
					.append(".png)\n\n");
			}
			out.append(pointTable(curve).markdown()).append('\n');
			out.append("How it grows: ").append(curve.growth).append(".\n\n");
		}
		Table local = localTable();
		out.append("#### Same-key re-acquisitions that never reached the database\n\n");
		out.append("Cycles whose acquisition sent no statement (a thread of the same JVM handed the key over): "
				+ "counted apart from the cycles above and drawn in no chart");
		out.append(local.isEmpty() ? ": none in this run.\n" : ".\n\n" + local.markdown());
		return out.toString();
	}

	private double pointSeconds() {
		return Double.parseDouble(System.getenv().getOrDefault("DB_LOCK_BENCH_CURVE_SECONDS", "2"));
	}

	private static Table pointTable(Curve curve) {
		Set<String> metrics = new LinkedHashSet<>();
		Set<String> notes = new LinkedHashSet<>();
		for (Curve.Point point : curve.points) {
			metrics.addAll(point.values().keySet());
			notes.addAll(point.notes().keySet());
		}
		List<String> headers = new ArrayList<>();
		boolean series = curve.series().size() > 1 || !curve.series().contains("");
		if (series) {
			headers.add("series");
		}
		headers.add(curve.xTitle);
		headers.addAll(metrics);
		headers.addAll(notes);
		Table table = new Table(headers.toArray(String[]::new));
		for (Curve.Point point : curve.points) {
			List<Object> cells = new ArrayList<>();
			if (series) {
				cells.add(point.series());
			}
			cells.add(Curve.format(point.x()));
			for (String metric : metrics) {
				cells.add(number(point.value(metric)));
			}
			for (String note : notes) {
				cells.add(point.notes().getOrDefault(note, ""));
			}
			table.row(cells.toArray());
		}
		return table;
	}

	private Table localTable() {
		Table table = new Table("curve", "series", "x", "re-acquisitions in the JVM", "per second",
				"share of all cycles", "p50 ms", "p99 ms");
		for (Curve curve : this.curves) {
			for (Curve.LocalRow row : curve.localRows) {
				long all = row.local().cycles() + row.databaseCycles();
				table.row(curve.id, row.series(), Curve.format(row.x()), row.local().cycles(),
						String.format("%.0f", row.local().perSecond()),
						String.format("%.1f%%", (all > 0) ? 100.0 * row.local().cycles() / all : 0.0),
						Report.millis(row.local().p50Millis()), Report.millis(row.local().p99Millis()));
			}
		}
		return table;
	}

	private Table csv() {
		Table table = new Table("database", "curve", "series", "x", "metric", "value");
		for (Curve curve : this.curves) {
			for (Curve.Point point : curve.points) {
				point.values().forEach((metric, value) -> table.row(this.settings.databaseName(), curve.id, point.series(),
						Curve.format(point.x()).replace(",", ""), metric, Double.isNaN(value) ? "" : String.format("%.4f", value)));
			}
			for (Curve.LocalRow row : curve.localRows) {
				table.row(this.settings.databaseName(), curve.id, row.series() + " (re-acquisitions in the JVM)",
						Curve.format(row.x()).replace(",", ""), "local cycles/s", String.format("%.1f", row.local().perSecond()));
			}
		}
		return table;
	}

	private static String number(double value) {
		if (Double.isNaN(value)) {
			return "";
		}
		double magnitude = Math.abs(value);
		return (magnitude >= 100) ? String.format("%,.0f", value) : (magnitude >= 10) ? String.format("%.1f", value)
				: String.format("%.2f", value);
	}

}
