package io.github.dblock.benchmarks;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The report's pictures, drawn with XChart: bars for the side-by-side comparisons, lines
 * for the curves; several charts to a PNG, in a grid.
 */
final class Charts {

	static final int WIDTH = 720;

	static final int HEIGHT = 420;

	private Charts() {
	}

	/**
	 * A line chart: a series per entry, each as x values and y values (a NaN y leaves a
	 * gap).
	 */
	static XYChart lines(String title, String xTitle, String yTitle, boolean logX, Map<String, double[][]> series) {
		XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle)
			.build();
		Styler styler = chart.getStyler();
		style(styler);
		styler.setLegendPosition(Styler.LegendPosition.OutsideS);
		chart.getStyler().setXAxisLogarithmic(logX);
		chart.getStyler().setYAxisMin(0.0);
		chart.getStyler().setXAxisDecimalPattern("#,###.##");
		chart.getStyler().setYAxisDecimalPattern("#,###.##");
		series.forEach((name, xy) -> {
			if (xy[0].length > 0) {
				chart.addSeries(name, xy[0], xy[1]).setMarker(SeriesMarkers.CIRCLE);
			}
		});
		return chart;
	}

	/** A bar chart: one bar per entry, each its own colour and legend entry. */
	static CategoryChart bars(String title, String yTitle, Map<String, Double> values) {
		CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).yAxisTitle(yTitle)
			.build();
		style(chart.getStyler());
		chart.getStyler().setLabelsVisible(true);
		chart.getStyler().setLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
		chart.getStyler().setLabelsRotation(90);
		chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
		chart.getStyler().setYAxisDecimalPattern("#,###.##");
		chart.getStyler().setXAxisTicksVisible(false);
		chart.getStyler().setYAxisMin(0.0);
		values.forEach((name, value) -> chart.addSeries(name, List.of(" "), List.of(Double.isFinite(value) ? value : 0)));
		return chart;
	}

	private static void style(Styler styler) {
		styler.setChartBackgroundColor(Color.WHITE);
		styler.setPlotBackgroundColor(Color.WHITE);
		styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
		styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		styler.setLegendPosition(Styler.LegendPosition.InsideNW);
		styler.setLegendBorderColor(Color.LIGHT_GRAY);
	}

	/** Writes charts to one PNG, {@code columns} a row (the last row may have fewer). */
	static void write(List<? extends Chart<?, ?>> charts, int columns, Path file) throws IOException {
		int cols = Math.min(columns, charts.size());
		int rows = (charts.size() + cols - 1) / cols;
		BufferedImage image = new BufferedImage(cols * WIDTH, rows * HEIGHT, BufferedImage.TYPE_INT_RGB);
		Graphics2D g = image.createGraphics();
		g.setColor(Color.WHITE);
		g.fillRect(0, 0, image.getWidth(), image.getHeight());
		for (int i = 0; i < charts.size(); i++) {
			g.drawImage(BitmapEncoder.getBufferedImage(charts.get(i)), (i % cols) * WIDTH, (i / cols) * HEIGHT, null);
		}
		g.dispose();
		ImageIO.write(image, "png", file.toFile());
	}

}
