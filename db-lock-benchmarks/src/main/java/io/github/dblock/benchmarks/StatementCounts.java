package io.github.dblock.benchmarks;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import javax.sql.DataSource;

/**
 * The server's statement counters summed over every session of a pool: {@code Questions}
 * counts every statement a client sent ({@code SET autocommit}, {@code COMMIT} and
 * isolation changes included), the {@code Com_*} counters tell them apart. Session, not
 * global, counters: statements of other clients of the same server do not count.
 * PostgreSQL has no such counter: there the count is the client's ({@link StatementTally}),
 * without a mix by kind.
 */
final class StatementCounts {

	static final StatementCounts ZERO = new StatementCounts(Map.of());

	private static final List<String> KINDS = List.of("select", "insert", "update", "delete", "set_option", "begin",
			"commit", "rollback");

	private static final String SQL = "SHOW SESSION STATUS WHERE Variable_name IN ('Questions', "
			+ KINDS.stream().map((kind) -> "'Com_" + kind + "'").collect(Collectors.joining(", ")) + ")";

	private final Map<String, Long> counters;

	private StatementCounts(Map<String, Long> counters) {
		this.counters = counters;
	}

	/**
	 * Reads the counters of all {@code connections} sessions of an idle pool. Each read is
	 * one statement of its session, which {@link #since} takes off again.
	 */
	static StatementCounts read(DataSource pool, int connections) throws SQLException {
		Map<String, Long> sum = new LinkedHashMap<>();
		List<Connection> all = new ArrayList<>();
		try {
			while (all.size() < connections) {
				Connection connection = pool.getConnection();
				all.add(connection);
				try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(SQL)) {
					while (rs.next()) {
						sum.merge(rs.getString(1).toLowerCase(Locale.ROOT), rs.getLong(2), Long::sum);
					}
				}
			}
		}
		finally {
			for (Connection connection : all) {
				connection.close();
			}
		}
		sum.merge("reads", (long) connections, Long::sum);
		return new StatementCounts(sum);
	}

	/** A count taken on the client ({@link StatementTally}): the total alone, no kinds. */
	static StatementCounts counted(long statements) {
		return new StatementCounts(Map.of("questions", statements));
	}

	/** The statements run between an earlier read and this one, without this read's own. */
	StatementCounts since(StatementCounts earlier) {
		Map<String, Long> delta = new LinkedHashMap<>();
		this.counters.forEach((name, value) -> {
			if (!name.equals("reads")) {
				delta.put(name, value - earlier.counters.getOrDefault(name, 0L));
			}
		});
		delta.merge("questions", -this.counters.getOrDefault("reads", 0L), Long::sum);
		return new StatementCounts(delta);
	}

	StatementCounts plus(StatementCounts other) {
		Map<String, Long> sum = new LinkedHashMap<>(this.counters);
		other.counters.forEach((name, value) -> sum.merge(name, value, Long::sum));
		return new StatementCounts(sum);
	}

	long questions() {
		return this.counters.getOrDefault("questions", 0L);
	}

	/** The statements by kind, per cycle: "insert 1.00 + delete 1.00". */
	String mixPerCycle(long cycles) {
		if (cycles == 0) {
			return "";
		}
		StringBuilder mix = new StringBuilder();
		for (String kind : KINDS) {
			double perCycle = this.counters.getOrDefault("com_" + kind, 0L) / (double) cycles;
			if (perCycle >= 0.005) {
				mix.append(mix.isEmpty() ? "" : " + ").append(kind).append(' ').append(String.format("%.2f", perCycle));
			}
		}
		return mix.toString();
	}

	void writeTo(DataOutputStream out) throws IOException {
		out.writeInt(this.counters.size());
		for (Map.Entry<String, Long> counter : this.counters.entrySet()) {
			out.writeUTF(counter.getKey());
			out.writeLong(counter.getValue());
		}
	}

	static StatementCounts readFrom(DataInputStream in) throws IOException {
		Map<String, Long> counters = new LinkedHashMap<>();
		for (int i = in.readInt(); i > 0; i--) {
			counters.put(in.readUTF(), in.readLong());
		}
		return new StatementCounts(counters);
	}

}
