package io.github.dblock.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

import io.github.dblock.benchmarks.contender.ContenderKind;
import org.knowm.xchart.CategoryChart;

/**
 * The side-by-side comparison as bar charts (XChart), one PNG: database cycles/s of
 * scenarios 1, 2, 4 and 5, statements per cycle of scenario 1, and the hot key's lock
 * utilisation and waiters' statements. Only cycles that reached the database are drawn:
 * same-key re-acquisitions handed over inside a JVM are in a table of their own.
 */
final class ComparisonChart {

	private final List<CategoryChart> charts = new ArrayList<>();

	ComparisonChart(List<Measurement> measurements) {
		for (Scenario scenario : Scenario.THROUGHPUT) {
			add(scenario.label() + ": database cycles/s", "cycles/s (higher is better)", measurements,
					(m) -> m.scenario() == scenario, Measurement::cyclesPerSecond);
		}
		add("1: one thread, one key: statements per cycle", "statements (lower is better)", measurements,
				(m) -> m.scenario() == Scenario.SINGLE_KEY, Measurement::statementsPerCycle);
		add("3: hot key, 1 ms holds: lock utilisation (targets 90% / 70%)", "% of the time held", measurements,
				(m) -> m.hotKey() != null, (m) -> 100 * m.hotKey().utilisation());
		add("3: hot key: waiters' statements/s", "statements/s (lower is better)", measurements,
				(m) -> m.hotKey() != null, (m) -> m.hotKey().waiterStatementsPerSecond());
	}

	private void add(String title, String yTitle, List<Measurement> measurements, Predicate<Measurement> shown,
			ToDoubleFunction<Measurement> value) {
		Map<String, Double> values = new LinkedHashMap<>();
		Map<String, Color> colours = new LinkedHashMap<>();
		for (Measurement m : measurements) {
			if (shown.test(m)) {
				String label = m.contender().label() + ((m.hotKey() != null) ? " " + m.setup() : "")
						+ (m.contender().durable() ? "" : " (not durable)");
				values.put(label, value.applyAsDouble(m));
				colours.put(label, colour(m.contender()));
			}
		}
		if (values.isEmpty()) {
			return;
		}
		CategoryChart chart = Charts.bars(title, yTitle, values);
		colours.forEach((label, colour) -> chart.getSeriesMap().get(label).setFillColor(colour));
		this.charts.add(chart);
	}

	boolean isEmpty() {
		return this.charts.isEmpty();
	}

	void write(Path file) throws IOException {
		Charts.write(this.charts, 2, file);
	}

	static Color colour(ContenderKind kind) {
		return switch (kind) {
			case DB_LOCK -> new Color(0x1f, 0x77, 0xb4);
			case DB_LOCK_ANNOTATION -> new Color(0x6b, 0xae, 0xd6);
			case SHEDLOCK -> new Color(0xff, 0x7f, 0x0e);
			case JDBC_LOCK_REGISTRY -> new Color(0xd6, 0x27, 0x28);
			case GET_LOCK -> new Color(0x99, 0x99, 0x99);
			case RAW_INSERT_DELETE -> new Color(0x2c, 0xa0, 0x2c);
			case RAW_ON_LEASE_ROW -> new Color(0x98, 0xdf, 0x8a);
			case DB_LOCK_NAMED -> new Color(0x94, 0x67, 0xbd);
			case DB_LOCK_NAMED_TOKEN -> new Color(0xc5, 0xb0, 0xd5);
			case DB_LOCK_TRANSACTION -> new Color(0x8c, 0x56, 0x4b);
			case DB_LOCK_TRANSACTION_TOKEN -> new Color(0xc4, 0x9c, 0x94);
			case DB_LOCK_TRANSACTION_ROWS_EXIST -> new Color(0xe3, 0x77, 0xc2);
			case SELECT_FOR_UPDATE -> new Color(0xbc, 0xbd, 0x22);
			case DB_LOCK_READ -> new Color(0x17, 0xbe, 0xcf);
			case DB_LOCK_WRITE -> new Color(0x0b, 0x6e, 0x7a);
			case DB_LOCK_FAIR -> new Color(0x39, 0x3b, 0x79);
		};
	}

}
