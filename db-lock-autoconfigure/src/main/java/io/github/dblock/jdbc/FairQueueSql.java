package io.github.dblock.jdbc;

import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import io.github.dblock.jdbc.FairLockRepository.Ticket;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;

/**
 * The fair mode's statements for one dialect, on the tables {@code <table>_fair_queue} and
 * {@code <table>_fair_keys}. A ticket is enqueued by one {@code INSERT ... SELECT} that
 * locks the key's row of the keys table ({@code FOR UPDATE}) before it draws the ticket's
 * number, and keeps it until it commits: a key's tickets commit in the order of their
 * numbers, so the lowest valid ticket a reader sees is the head, and no ticket with a lower
 * number appears after it (which would let two owners in). Numbers come from the lease
 * tokens' sequence, or from {@code AUTO_INCREMENT} where there are no sequences (MySQL; the
 * same on MariaDB).
 */
final class FairQueueSql {

	private final SqlDialect dialect;

	private final String queue;

	private final String enqueueSql;

	/** Whether the number comes back as the generated key (MySQL family), else as a result. */
	private final boolean generatedKey;

	private final String insertKeySql;

	private final String headSql;

	private final String renewSql;

	private final String leaveSql;

	private final String abandonSql;

	private final String deleteExpiredSql;

	private FairQueueSql(SqlDialect dialect) {
		this.dialect = dialect;
		String table = dialect.table();
		this.queue = table + "_fair_queue";
		String keys = table + "_fair_keys";
		String lease = dialect.plusMicros(dialect.now());
		// parameters of every form: owner, lease in microseconds, key
		if (dialect instanceof MySqlFamilyDialect) {
			this.enqueueSql = "INSERT INTO %s (lock_key, owner, expires_at) SELECT lock_key, ?, %s FROM %s WHERE lock_key = ? FOR UPDATE"
				.formatted(this.queue, lease, keys);
			this.generatedKey = true;
			this.insertKeySql = "INSERT IGNORE INTO " + keys + " (lock_key) VALUES (?)";
		}
		else if (dialect instanceof PostgreSqlDialect) {
			// a subquery with FOR UPDATE is not flattened: nextval runs once the row is locked
			this.enqueueSql = compact("""
					INSERT INTO %1$s (ticket, lock_key, owner, expires_at)
					SELECT nextval('%2$s_token_seq'), k.lock_key, ?, %3$s
					FROM (SELECT lock_key FROM %4$s WHERE lock_key = ? FOR UPDATE) k RETURNING ticket""")
				.formatted(this.queue, table, lease, keys);
			this.generatedKey = false;
			this.insertKeySql = "INSERT INTO " + keys + " (lock_key) VALUES (?) ON CONFLICT (lock_key) DO NOTHING";
		}
		else if (dialect instanceof H2Dialect) {
			this.enqueueSql = compact("""
					SELECT ticket FROM FINAL TABLE (INSERT INTO %1$s (ticket, lock_key, owner, expires_at)
					SELECT NEXT VALUE FOR %2$s_token_seq, lock_key, ?, %3$s FROM %4$s WHERE lock_key = ? FOR UPDATE)""")
				.formatted(this.queue, table, lease, keys);
			this.generatedKey = false;
			this.insertKeySql = "INSERT INTO " + keys + " (lock_key) VALUES (?)";
		}
		else {
			throw new IllegalArgumentException("The fair mode has no statements for " + dialect);
		}
		this.headSql = "SELECT ticket FROM %s WHERE lock_key = ? AND ticket <= ? AND expires_at > %s ORDER BY ticket LIMIT 1"
			.formatted(this.queue, dialect.now());
		this.renewSql = "UPDATE %s SET expires_at = %s WHERE ticket = ? AND owner = ? AND expires_at > %s"
			.formatted(this.queue, lease, dialect.now());
		this.leaveSql = "DELETE FROM " + this.queue + " WHERE ticket = ? AND owner = ? AND lock_key = ?";
		this.abandonSql = "DELETE FROM " + this.queue + " WHERE lock_key = ? AND owner = ?";
		this.deleteExpiredSql = dialect.deleteExpiredSql(this.queue);
	}

	/**
	 * The statements of a dialect.
	 * @param dialect the dialect, naming the lock table
	 * @return the statements
	 * @throws IllegalArgumentException for a dialect the fair mode has no statements for
	 */
	static FairQueueSql of(SqlDialect dialect) {
		return new FairQueueSql(dialect);
	}

	/** The queue table's name. */
	String queueTable() {
		return this.queue;
	}

	/** Enqueues a ticket; creates the key's row first if it has none. */
	long enqueue(JdbcOperations jdbc, String key, String owner, Duration lease) {
		Long ticket = insertTicket(jdbc, key, owner, lease);
		if (ticket == null) {
			try {
				jdbc.update(this.insertKeySql, key);
			}
			catch (DuplicateKeyException ex) {
				// inserted meanwhile by another caller
			}
			ticket = insertTicket(jdbc, key, owner, lease);
		}
		return Objects.requireNonNull(ticket, () -> "no ticket enqueued for '" + key + "'");
	}

	private @Nullable Long insertTicket(JdbcOperations jdbc, String key, String owner, Duration lease) {
		long micros = SqlDialect.micros(lease);
		if (!this.generatedKey) {
			List<Long> tickets = jdbc.queryForList(this.enqueueSql, Long.class, owner, micros, key);
			return tickets.isEmpty() ? null : tickets.get(0);
		}
		KeyHolder keys = new GeneratedKeyHolder();
		int inserted = jdbc.update((con) -> {
			PreparedStatement ps = con.prepareStatement(this.enqueueSql, Statement.RETURN_GENERATED_KEYS);
			ps.setString(1, owner);
			ps.setLong(2, micros);
			ps.setString(3, key);
			return ps;
		}, keys);
		return (inserted == 0) ? null : Objects.requireNonNull(keys.getKey(), "no generated ticket").longValue();
	}

	long head(JdbcOperations jdbc, Ticket ticket) {
		List<Long> first = jdbc.queryForList(this.headSql, Long.class, ticket.key(), ticket.number());
		return first.isEmpty() ? 0 : first.get(0);
	}

	/** One statement for all when every ticket is renewed; each alone after it otherwise. */
	List<Boolean> renewAll(JdbcOperations jdbc, List<Ticket> tickets, Duration lease) {
		long micros = SqlDialect.micros(lease);
		if (tickets.size() > 1) {
			String list = String.join(", ", Collections.nCopies(tickets.size(), "?"));
			Object[] parameters = new Object[1 + 2 * tickets.size()];
			parameters[0] = micros;
			for (int i = 0; i < tickets.size(); i++) {
				parameters[1 + i] = tickets.get(i).number();
				parameters[1 + tickets.size() + i] = tickets.get(i).owner();
			}
			String sql = "UPDATE %s SET expires_at = %s WHERE ticket IN (%s) AND owner IN (%s) AND expires_at > %s"
				.formatted(this.queue, this.dialect.plusMicros(this.dialect.now()), list, list, this.dialect.now());
			if (jdbc.update(sql, parameters) == tickets.size()) {
				return Collections.nCopies(tickets.size(), Boolean.TRUE);
			}
		}
		List<Boolean> renewed = new ArrayList<>(tickets.size());
		for (Ticket ticket : tickets) {
			renewed.add(jdbc.update(this.renewSql, micros, ticket.number(), ticket.owner()) == 1);
		}
		return renewed;
	}

	boolean leave(JdbcOperations jdbc, Ticket ticket) {
		return jdbc.update(this.leaveSql, ticket.number(), ticket.owner(), ticket.key()) == 1;
	}

	boolean abandon(JdbcOperations jdbc, String key, String owner) {
		return jdbc.update(this.abandonSql, key, owner) > 0;
	}

	int deleteExpired(JdbcOperations jdbc, int limit) {
		return jdbc.update(this.deleteExpiredSql, limit);
	}

	/** Fails if a table is missing. */
	void checkTables(JdbcOperations jdbc) {
		jdbc.queryForList("SELECT ticket FROM " + this.queue + " WHERE 1 = 0", Long.class);
	}

	private static String compact(String sql) {
		return sql.strip().replaceAll("\\s+", " ");
	}

}
