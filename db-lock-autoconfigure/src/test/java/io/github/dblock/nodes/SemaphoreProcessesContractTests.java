package io.github.dblock.nodes;

import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The semaphore mode and several keys at once between nodes that are separate JVM processes
 * on one database:
 * <ul>
 * <li>three processes of four threads each take permits of a key of three permits for a
 * while ({@link SemaphoreNode}): the holders inside, counted in the database, reach three
 * and never exceed it, no wait runs out, and the fencing tokens of each permit key increase
 * in the order of its acquisitions;</li>
 * <li>a process holding a permit with a short lease renewed by its watchdog is killed with
 * SIGKILL ({@link SemaphoreHolderNode}) while another process holds the other permits and
 * waits for the last: it gets the dead process's permit, once the dead lease has ended (the
 * database's clocks of both), with a larger token;</li>
 * <li>two processes of eight threads each move amounts between five accounts, each transfer
 * holding its two accounts' keys at once ({@link TransferNode}): the total stays, no update
 * is lost, no account is ever entered by two transfers at once, and no wait runs out.</li>
 * </ul>
 */
abstract class SemaphoreProcessesContractTests {

	private static final int PERMITS = 3;

	private static final int PROCESSES = 3;

	private static final int THREADS = 4;

	/** How long the semaphore's nodes take permits. */
	private static final long SEMAPHORE_MILLIS = 10_000;

	private static final int ACCOUNTS = 5;

	private static final long BALANCE = 1000;

	private static final int TRANSFER_PROCESSES = 2;

	private static final int TRANSFER_THREADS = 8;

	/** How long the transfer nodes move amounts. */
	private static final long TRANSFER_MILLIS = 10_000;

	private static final String SEMAPHORES = TestDatabase.TABLE + "_semaphore";

	protected abstract TestDatabase database();

	@Test
	void threeProcessesNeverHoldMoreThanThePermitsAndTheTokensOfEachPermitIncrease() throws Exception {
		String key = "semaphore-processes";
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = prepareTables(dataSource, key);
			jdbc.update("DELETE FROM " + SemaphoreNode.INSIDE_TABLE);
			jdbc.update("INSERT INTO " + SemaphoreNode.INSIDE_TABLE + " (id, inside) VALUES (1, 0)");
			jdbc.update("DELETE FROM " + SemaphoreNode.PERMITS_TABLE);
			List<Map<String, String>> nodes = NodeSupport.run(PROCESSES, SemaphoreNode.class, database().connection(),
					(node) -> new Object[] { key, PERMITS, node, PROCESSES, THREADS, SEMAPHORE_MILLIS });
			// the order of each permit key's acquisitions, as the database saw them
			Map<String, Long> lastToken = new TreeMap<>();
			Map<String, Integer> perPermit = new TreeMap<>();
			Set<Long> tokens = new HashSet<>();
			int outOfOrder = 0;
			int duplicates = 0;
			List<Map<String, Object>> rows = jdbc
				.queryForList("SELECT permit_key, token FROM " + SemaphoreNode.PERMITS_TABLE + " ORDER BY id");
			for (Map<String, Object> row : rows) {
				String permitKey = (String) row.get("permit_key");
				long token = ((Number) row.get("token")).longValue();
				Long last = lastToken.put(permitKey, token);
				if (last != null && token <= last) {
					outOfOrder++;
				}
				perPermit.merge(permitKey, 1, Integer::sum);
				if (!tokens.add(token)) {
					duplicates++;
				}
			}
			long acquired = sum(nodes, "acquired");
			int maxInside = nodes.stream().mapToInt((node) -> Integer.parseInt(node.get("maxInside"))).max().orElse(0);
			System.out.println(database() + " semaphore, " + PROCESSES + " processes x " + THREADS + " threads, "
					+ PERMITS + " permits, " + SEMAPHORE_MILLIS + " ms: acquisitions " + values(nodes, "acquired")
					+ " (" + acquired + "), per permit key " + perPermit + ", max inside " + maxInside
					+ ", acquisitions that saw every permit held " + values(nodes, "atFull") + ", violations (inside > "
					+ PERMITS + ") " + values(nodes, "violations") + ", tokens out of order per permit key "
					+ outOfOrder + ", duplicate tokens " + duplicates + ", timeouts " + values(nodes, "timeouts")
					+ ", lost " + values(nodes, "lost") + ", max wait ms " + values(nodes, "maxWaitMillis")
					+ ", starts within " + startSpread(nodes) + " ms");
			for (Map<String, String> node : nodes) {
				assertThat(node.get("violations")).isEqualTo("0");
				assertThat(node.get("timeouts")).isEqualTo("0");
				assertThat(node.get("lost")).isEqualTo("0");
			}
			assertThat(maxInside).isEqualTo(PERMITS);
			assertThat(outOfOrder).isZero();
			assertThat(duplicates).isZero();
			assertThat(rows).hasSize((int) acquired);
			assertThat(perPermit.keySet()).containsExactlyElementsOf(permitKeys(key));
			assertThat(jdbc.queryForObject("SELECT inside FROM " + SemaphoreNode.INSIDE_TABLE + " WHERE id = 1",
					Integer.class))
				.isZero();
			assertThat(permitRows(jdbc, key)).isZero();
		}
	}

	@Test
	void aPermitOfAHolderKilledWithSigkillIsTakenOnceItsLeaseEndedWithALargerToken() throws Exception {
		String key = "semaphore-killed-holder";
		String signal = "semaphore-killed-holder-held";
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = prepareTables(dataSource, key);
			NodeSupport.Node holder = NodeSupport.start(SemaphoreHolderNode.class, database().connection(), "hold", key,
					PERMITS, signal);
			NodeSupport.Node taker = null;
			try {
				NodeSupport.awaitSignal(jdbc,
						"SELECT COUNT(*) FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name = '" + signal + "'", 1);
				// the fencing token of the holder's handle, and its permit's row: the only one of the key
				long deadToken = jdbc.queryForObject(
						"SELECT signal_value FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name = ?", Long.class, signal);
				Map<String, Object> deadRow = jdbc.queryForMap(
						"SELECT lock_key, token FROM " + TestDatabase.TABLE + " WHERE lock_key LIKE ?", key + "#permit-%");
				String deadKey = (String) deadRow.get("lock_key");
				long deadRowToken = ((Number) deadRow.get("token")).longValue();
				// its watchdog keeps the permit past its first lease while the process lives
				awaitRenewed(jdbc, deadKey, deadRowToken);
				taker = NodeSupport.start(SemaphoreHolderNode.class, database().connection(), "take", key, PERMITS,
						signal);
				// the taker holds every permit but the holder's, and waits for that one
				NodeSupport.awaitSignal(jdbc, "SELECT COUNT(*) FROM " + TestDatabase.TABLE + " WHERE lock_key LIKE '" + key
						+ "#permit-%'", PERMITS);
				assertThat(jdbc.queryForObject("SELECT token FROM " + TestDatabase.TABLE + " WHERE lock_key = ?",
						Long.class, deadKey))
					.as("the holder's permit, still its own while it lives")
					.isEqualTo(deadRowToken);
				assertThat(holder.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS)).isTrue();
				long killedAt = NodeSupport.databaseMicros(jdbc, database().dialect(dataSource));
				// the dead lease's end, as the database has it once nobody renews it (unless the taker already has it)
				List<Timestamp> deadEnd = jdbc.queryForList(
						"SELECT expires_at FROM " + TestDatabase.TABLE + " WHERE lock_key = ? AND token = ?",
						Timestamp.class, deadKey, deadRowToken);
				Map<String, String> taken = NodeSupport.values(NodeSupport.finish(taker));
				assertThat(taken.get("rows")).isEqualTo(String.valueOf(PERMITS));
				Map<String, Long> rowTokenOf = new HashMap<>();
				Map<String, Long> acquiredAt = new HashMap<>();
				Map<String, Long> handleTokenOf = new HashMap<>();
				for (int n = 0; n < PERMITS; n++) {
					rowTokenOf.put(taken.get("rowKey." + n), Long.parseLong(taken.get("rowToken." + n)));
					acquiredAt.put(taken.get("rowKey." + n), Long.parseLong(taken.get("rowAcquiredMicros." + n)));
					handleTokenOf.put(taken.get("handleKey." + n), Long.parseLong(taken.get("handleToken." + n)));
				}
				long deadEndMicros = deadEnd.isEmpty() ? -1 : SemaphoreHolderNode.micros(deadEnd.get(0));
				long takenAt = acquiredAt.get(deadKey);
				System.out.println(database() + " semaphore: the holder of " + deadKey + " (handle token " + deadToken
						+ ", row token " + deadRowToken + ", lease " + SemaphoreHolderNode.LEASE
						+ " renewed) killed with SIGKILL; its permit taken by another process with handle token "
						+ handleTokenOf.get(deadKey) + ", row token " + rowTokenOf.get(deadKey) + ", "
						+ (takenAt - killedAt) / 1000 + " ms after the kill and "
						+ (deadEnd.isEmpty() ? "? (the dead lease's end was not read before the taker had it)"
								: (takenAt - deadEndMicros) / 1000 + " ms after the dead lease ended")
						+ " (database clock); the taker's handle tokens " + handleTokenOf + ", row tokens " + rowTokenOf);
				assertThat(handleTokenOf.keySet()).containsExactlyInAnyOrderElementsOf(permitKeys(key));
				assertThat(rowTokenOf.keySet()).containsExactlyInAnyOrderElementsOf(permitKeys(key));
				assertThat(handleTokenOf.get(deadKey)).isGreaterThan(deadToken);
				assertThat(rowTokenOf.get(deadKey)).isGreaterThan(deadRowToken);
				if (!deadEnd.isEmpty()) {
					assertThat(takenAt).as("taken at, not before the dead lease's end").isGreaterThanOrEqualTo(deadEndMicros);
				}
				assertThat(permitRows(jdbc, key)).isZero();
			}
			finally {
				holder.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				if (taker != null) {
					taker.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				}
			}
		}
	}

	@Test
	void transfersHoldingBothAccountsKeepTheTotalAndNeverOverlap() throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = signalTable(dataSource);
			jdbc.execute("CREATE TABLE IF NOT EXISTS " + TransferNode.ACCOUNTS_TABLE
					+ " (id INT PRIMARY KEY, balance BIGINT NOT NULL, version BIGINT NOT NULL, fence BIGINT NOT NULL)");
			jdbc.execute("CREATE TABLE IF NOT EXISTS " + TransferNode.INSIDE_TABLE
					+ " (id INT PRIMARY KEY, inside INT NOT NULL)");
			jdbc.update("DELETE FROM " + TransferNode.ACCOUNTS_TABLE);
			jdbc.update("DELETE FROM " + TransferNode.INSIDE_TABLE);
			for (int account = 0; account < ACCOUNTS; account++) {
				jdbc.update("INSERT INTO " + TransferNode.ACCOUNTS_TABLE + " (id, balance, version, fence) VALUES (?, ?, 0, 0)",
						account, BALANCE);
				jdbc.update("INSERT INTO " + TransferNode.INSIDE_TABLE + " (id, inside) VALUES (?, 0)", account);
			}
			List<Map<String, String>> nodes = NodeSupport.run(TRANSFER_PROCESSES, TransferNode.class,
					database().connection(),
					(node) -> new Object[] { ACCOUNTS, node, TRANSFER_PROCESSES, TRANSFER_THREADS, TRANSFER_MILLIS });
			long total = jdbc.queryForObject("SELECT SUM(balance) FROM " + TransferNode.ACCOUNTS_TABLE, Long.class);
			long versions = jdbc.queryForObject("SELECT SUM(version) FROM " + TransferNode.ACCOUNTS_TABLE, Long.class);
			List<Long> balances = jdbc.queryForList("SELECT balance FROM " + TransferNode.ACCOUNTS_TABLE + " ORDER BY id",
					Long.class);
			long transfers = sum(nodes, "transfers");
			System.out.println(database() + " transfers, " + TRANSFER_PROCESSES + " processes x " + TRANSFER_THREADS
					+ " threads, " + ACCOUNTS + " accounts, " + TRANSFER_MILLIS + " ms: transfers " + values(nodes, "transfers")
					+ " (" + transfers + "), total " + total + " of " + ACCOUNTS * BALANCE + ", balances " + balances
					+ ", account versions " + versions + " of " + 2 * transfers + ", overlaps " + values(nodes, "overlaps")
					+ ", timeouts " + values(nodes, "timeouts") + ", deadlocks " + values(nodes, "deadlocks")
					+ ", fence refusals " + values(nodes, "refused") + ", keys out of order " + values(nodes, "keyOrder")
					+ ", lost " + values(nodes, "lost") + ", max wait ms " + values(nodes, "maxWaitMillis")
					+ ", starts within " + startSpread(nodes) + " ms");
			for (Map<String, String> node : nodes) {
				assertThat(node.get("overlaps")).isEqualTo("0");
				assertThat(node.get("timeouts")).isEqualTo("0");
				assertThat(node.get("deadlocks")).isEqualTo("0");
				assertThat(node.get("refused")).isEqualTo("0");
				assertThat(node.get("keyOrder")).isEqualTo("0");
				assertThat(node.get("lost")).isEqualTo("0");
			}
			assertThat(transfers).isPositive();
			assertThat(total).isEqualTo(ACCOUNTS * BALANCE);
			// every transfer wrote two accounts, each a version up from what it read: no update lost
			assertThat(versions).isEqualTo(2 * transfers);
			assertThat(jdbc.queryForObject("SELECT SUM(inside) FROM " + TransferNode.INSIDE_TABLE, Long.class)).isZero();
		}
	}

	/** Creates the tables of the semaphore's nodes and forgets the key's permits and signal rows. */
	private JdbcTemplate prepareTables(HikariDataSource dataSource, String key) {
		JdbcTemplate jdbc = signalTable(dataSource);
		String id = (database() == TestDatabase.POSTGRESQL) ? "BIGSERIAL PRIMARY KEY" : "BIGINT AUTO_INCREMENT PRIMARY KEY";
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + SemaphoreNode.INSIDE_TABLE + " (id INT PRIMARY KEY, inside INT NOT NULL)");
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + SemaphoreNode.PERMITS_TABLE + " (id " + id
				+ ", permit_key VARCHAR(255) NOT NULL, token BIGINT NOT NULL, node INT NOT NULL)");
		// the number of permits recorded at the key's first use, by an earlier run
		jdbc.update("DELETE FROM " + SEMAPHORES + " WHERE lock_key = ?", key);
		return jdbc;
	}

	/** Creates the table of the nodes' signal rows, emptied. */
	private static JdbcTemplate signalTable(HikariDataSource dataSource) {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.SIGNAL_TABLE
				+ " (name VARCHAR(100) PRIMARY KEY, signal_value BIGINT NOT NULL)");
		jdbc.update("DELETE FROM " + ModeNodes.SIGNAL_TABLE);
		return jdbc;
	}

	/** Polls the lock table until the permit's lease was renewed past its first end. */
	private static void awaitRenewed(JdbcTemplate jdbc, String permitKey, long token) {
		long leaseMicros = SemaphoreHolderNode.LEASE.toNanos() / 1000;
		long deadline = System.nanoTime() + NodeSupport.SIGNAL_TIMEOUT.toNanos();
		while (true) {
			Map<String, Object> row = jdbc.queryForMap("SELECT acquired_at, expires_at FROM " + TestDatabase.TABLE
					+ " WHERE lock_key = ? AND token = ?", permitKey, token);
			long acquiredAt = SemaphoreHolderNode.micros(timestamp(row.get("acquired_at")));
			long expiresAt = SemaphoreHolderNode.micros(timestamp(row.get("expires_at")));
			if (expiresAt - acquiredAt > leaseMicros) {
				return;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("the lease of " + permitKey + " was never renewed within "
						+ NodeSupport.SIGNAL_TIMEOUT);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
		}
	}

	private static Timestamp timestamp(Object value) {
		if (value instanceof java.time.LocalDateTime local) {
			return Timestamp.valueOf(local);
		}
		if (value instanceof java.time.OffsetDateTime offset) {
			return Timestamp.from(offset.toInstant());
		}
		return (Timestamp) value;
	}

	private static int permitRows(JdbcTemplate jdbc, String key) {
		return jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + " WHERE lock_key LIKE ?", Integer.class,
				key + "#permit-%");
	}

	private static List<String> permitKeys(String key) {
		return IntStream.range(0, PERMITS).mapToObj((n) -> key + "#permit-" + n).toList();
	}

	/** How far apart the nodes began, in milliseconds of the wall clock. */
	private static long startSpread(List<Map<String, String>> nodes) {
		List<Long> starts = nodes.stream().map((node) -> Long.parseLong(node.get("startedAt"))).toList();
		return starts.stream().mapToLong(Long::longValue).max().orElse(0)
				- starts.stream().mapToLong(Long::longValue).min().orElse(0);
	}

	private static long sum(List<Map<String, String>> nodes, String name) {
		return nodes.stream().mapToLong((node) -> Long.parseLong(node.get(name))).sum();
	}

	private static List<String> values(List<Map<String, String>> nodes, String name) {
		List<String> values = new ArrayList<>();
		for (Map<String, String> node : nodes) {
			values.add(node.get(name));
		}
		return values;
	}

}
