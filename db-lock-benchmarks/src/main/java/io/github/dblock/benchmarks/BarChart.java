package io.github.dblock.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

import javax.imageio.ImageIO;

import io.github.dblock.benchmarks.contender.ContenderKind;

/**
 * The run as a PNG of horizontal bar panels, drawn with Java2D: throughput of scenarios 1,
 * 2 and 4, statements per cycle, and the hot key's utilisation and waiters' statements.
 */
final class BarChart {

	private static final int WIDTH = 1500;

	private static final int PANEL_HEIGHT = 330;

	private static final int COLUMNS = 2;

	private static final int HEADER = 60;

	private final List<Panel> panels = new ArrayList<>();

	private final Machine machine;

	BarChart(List<Measurement> measurements, Machine machine) {
		this.machine = machine;
		for (Scenario scenario : Scenario.THROUGHPUT) {
			this.panels.add(Panel.of(scenario.label() + ": cycles/s (higher is better)", measurements,
					(m) -> m.scenario() == scenario, Measurement::cyclesPerSecond, "%.0f", -1));
		}
		this.panels.add(Panel.of("1: one thread, one key: statements per cycle (lower is better)", measurements,
				(m) -> m.scenario() == Scenario.SINGLE_KEY, Measurement::statementsPerCycle, "%.2f", 2));
		this.panels.add(Panel.of("3: hot key, 1 ms holds: lock utilisation % (targets: 90 in one JVM, 70 in two)", measurements,
				(m) -> m.hotKey() != null, (m) -> 100 * m.hotKey().utilisation(), "%.1f%%", 70));
		this.panels.add(Panel.of("3: hot key: statements/s by waiters (lower is better)", measurements,
				(m) -> m.hotKey() != null, (m) -> m.hotKey().waiterStatementsPerSecond(), "%.0f", -1));
	}

	void write(Path file) throws IOException {
		int rows = (this.panels.size() + COLUMNS - 1) / COLUMNS;
		BufferedImage image = new BufferedImage(WIDTH, HEADER + rows * PANEL_HEIGHT, BufferedImage.TYPE_INT_RGB);
		Graphics2D g = image.createGraphics();
		g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
		g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
		g.setColor(Color.WHITE);
		g.fillRect(0, 0, image.getWidth(), image.getHeight());
		g.setColor(Color.BLACK);
		g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
		g.drawString("db-lock benchmark, " + this.machine.date(), 20, 28);
		g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
		g.drawString(this.machine.summary(), 20, 48);
		int panelWidth = WIDTH / COLUMNS;
		for (int i = 0; i < this.panels.size(); i++) {
			this.panels.get(i).draw(g, (i % COLUMNS) * panelWidth, HEADER + (i / COLUMNS) * PANEL_HEIGHT, panelWidth,
					PANEL_HEIGHT);
		}
		g.dispose();
		ImageIO.write(image, "png", file.toFile());
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
		};
	}

	/** One panel: a bar per measurement, and an optional target line. */
	private record Panel(String title, List<String> labels, List<Double> values, List<Color> colours, String format,
			double target) {

		static Panel of(String title, List<Measurement> measurements, Predicate<Measurement> shown,
				ToDoubleFunction<Measurement> value, String format, double target) {
			List<String> labels = new ArrayList<>();
			List<Double> values = new ArrayList<>();
			List<Color> colours = new ArrayList<>();
			for (Measurement m : measurements) {
				if (shown.test(m)) {
					labels.add(m.contender().label() + ((m.hotKey() != null) ? " " + m.setup() : "")
							+ (m.contender().durable() ? "" : " (not durable)"));
					values.add(value.applyAsDouble(m));
					colours.add(colour(m.contender()));
				}
			}
			return new Panel(title, labels, values, colours, format, target);
		}

		void draw(Graphics2D g, int x, int y, int width, int height) {
			g.setColor(Color.BLACK);
			g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
			g.drawString(this.title, x + 20, y + 24);
			if (this.values.isEmpty()) {
				return;
			}
			int labelWidth = 300;
			int left = x + 20 + labelWidth;
			int barSpace = width - labelWidth - 110;
			int top = y + 40;
			int rowHeight = Math.min(32, (height - 60) / this.values.size());
			double max = Math.max(this.target, this.values.stream().mapToDouble(Double::doubleValue).filter(Double::isFinite).max().orElse(1));
			g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
			for (int i = 0; i < this.values.size(); i++) {
				int rowY = top + i * rowHeight;
				double value = this.values.get(i);
				int length = Double.isFinite(value) ? (int) Math.round(barSpace * value / max) : 0;
				g.setColor(Color.DARK_GRAY);
				g.drawString(this.labels.get(i), x + 20, rowY + rowHeight / 2 + 4);
				g.setColor(this.colours.get(i));
				g.fillRect(left, rowY + 3, Math.max(length, 1), rowHeight - 6);
				g.setColor(Color.BLACK);
				g.drawString(String.format(this.format, value), left + length + 6, rowY + rowHeight / 2 + 4);
			}
			if (this.target > 0) {
				int targetX = left + (int) Math.round(barSpace * this.target / max);
				g.setColor(Color.RED);
				g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] { 5, 4 }, 0));
				g.drawLine(targetX, top - 4, targetX, top + this.values.size() * rowHeight);
				g.setStroke(new BasicStroke());
			}
		}

	}

}
