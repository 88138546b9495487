package io.github.dblock.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** A table of text cells, rendered as padded Markdown (readable on a console too) or CSV. */
final class Table {

	private final List<String> headers;

	private final List<List<String>> rows = new ArrayList<>();

	Table(String... headers) {
		this.headers = List.of(headers);
	}

	void row(Object... cells) {
		List<String> row = new ArrayList<>();
		for (Object cell : cells) {
			row.add(String.valueOf(cell));
		}
		this.rows.add(row);
	}

	boolean isEmpty() {
		return this.rows.isEmpty();
	}

	String markdown() {
		int[] widths = new int[this.headers.size()];
		for (int i = 0; i < widths.length; i++) {
			widths[i] = this.headers.get(i).length();
			for (List<String> row : this.rows) {
				widths[i] = Math.max(widths[i], row.get(i).length());
			}
		}
		StringBuilder out = new StringBuilder();
		line(out, this.headers, widths);
		List<String> rule = new ArrayList<>();
		for (int width : widths) {
			rule.add("-".repeat(width));
		}
		line(out, rule, widths);
		for (List<String> row : this.rows) {
			line(out, row, widths);
		}
		return out.toString();
	}

	String csv() {
		StringBuilder out = new StringBuilder();
		out.append(csvLine(this.headers));
		for (List<String> row : this.rows) {
			out.append(csvLine(row));
		}
		return out.toString();
	}

	private static void line(StringBuilder out, List<String> cells, int[] widths) {
		out.append('|');
		for (int i = 0; i < cells.size(); i++) {
			out.append(' ').append(cells.get(i).replace("|", "\\|"));
			out.append(" ".repeat(widths[i] - cells.get(i).length())).append(" |");
		}
		out.append('\n');
	}

	private static String csvLine(List<String> cells) {
		return cells.stream()
			.map((cell) -> (cell.contains(",") || cell.contains("\"")) ? '"' + cell.replace("\"", "\"\"") + '"' : cell)
			.collect(Collectors.joining(",")) + "\n";
	}

}
