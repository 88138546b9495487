package io.github.dblock.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The server's own statement counters, read on a connection of their own: {@code Questions}
 * counts every statement a client sent (including {@code SET autocommit}, {@code COMMIT},
 * isolation changes), the {@code Com_*} counters tell them apart.
 */
final class ServerStatus implements AutoCloseable {

	private static final List<String> KINDS = List.of("select", "insert", "update", "delete", "set_option", "begin",
			"commit", "rollback");

	private static final String SQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', "
			+ KINDS.stream().map((kind) -> "'Com_" + kind + "'").collect(Collectors.joining(", ")) + ")";

	private final Connection connection;

	ServerStatus(BenchSettings settings) throws SQLException {
		this.connection = DriverManager.getConnection(settings.url(), settings.user(), settings.password());
	}

	String version() throws SQLException {
		try (Statement statement = this.connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT VERSION()")) {
			rs.next();
			return rs.getString(1);
		}
	}

	Snapshot snapshot() throws SQLException {
		Map<String, Long> counters = new LinkedHashMap<>();
		try (Statement statement = this.connection.createStatement(); ResultSet rs = statement.executeQuery(SQL)) {
			while (rs.next()) {
				counters.put(rs.getString(1).toLowerCase(java.util.Locale.ROOT), rs.getLong(2));
			}
		}
		return new Snapshot(counters);
	}

	@Override
	public void close() throws SQLException {
		this.connection.close();
	}

	/** Counter values at one moment; a snapshot counts itself as one question. */
	record Snapshot(Map<String, Long> counters) {

		/** Statements between this snapshot and a later one, without the later snapshot itself. */
		long questionsUntil(Snapshot later) {
			return later.counters.getOrDefault("questions", 0L) - this.counters.getOrDefault("questions", 0L) - 1;
		}

		/** The statements between this snapshot and a later one, per cycle and kind: "insert 1.00 + delete 1.00". */
		String mixUntil(Snapshot later, long cycles) {
			if (cycles == 0) {
				return "";
			}
			StringBuilder mix = new StringBuilder();
			for (String kind : KINDS) {
				String name = "com_" + kind;
				double perCycle = (later.counters.getOrDefault(name, 0L) - this.counters.getOrDefault(name, 0L))
						/ (double) cycles;
				if (perCycle >= 0.005) {
					mix.append(mix.isEmpty() ? "" : " + ").append(kind).append(' ').append(String.format("%.2f", perCycle));
				}
			}
			return mix.toString();
		}

	}

}
