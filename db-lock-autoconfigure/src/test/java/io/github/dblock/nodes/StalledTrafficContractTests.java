package io.github.dblock.nodes;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockConnectionPool;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.StallingProxy;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * One process's traffic stalled, by a TCP proxy in the test, while it holds a lock: the
 * other node (this JVM) takes the key once the stalled lease has ended, the stalled handle
 * says it is lost, its fenced write after the stall is rejected, and its release leaves the
 * new holder's row alone.
 */
abstract class StalledTrafficContractTests {

	protected abstract TestDatabase database();

	@Test
	void anAcquisitionWhoseReplyIsLostLeavesNoRowOnceTheDatabaseAnswersAgain() throws Exception {
		TestDatabase.Connection settings = database().connection();
		try (HikariDataSource direct = database().dataSource(2); StallingProxy proxy = StallingProxy.before(settings)) {
			HikariConfig config = proxy.poolConfig(settings, 2);
			config.setConnectionTimeout(1000);
			try (HikariDataSource proxied = new HikariDataSource(config);
					LockEngine node = new LockEngine(
							new JdbcLockRepository(proxied, database().dialect(direct), Duration.ofSeconds(1)),
							LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
				JdbcTemplate jdbc = new JdbcTemplate(direct);
				node.acquire(LockRequest.of("warm-up", Duration.ZERO, Duration.ofSeconds(30))).close();
				long tokensBefore = tokensDrawn(jdbc);
				proxy.stallReplies();
				Duration lease = Duration.ofSeconds(60);
				assertThatExceptionOfType(DbLockException.class)
					.isThrownBy(() -> node.acquire(LockRequest.of("reply-lost", Duration.ZERO, lease)))
					.withMessageContaining("database");
				// the insert ran, its caller told it failed: it drew a token. (Its row may be gone already:
				// requests still flow, so the clean-up's DELETE can run before its reply comes back.)
				assertThat(tokensDrawn(jdbc)).isGreaterThan(tokensBefore);
				proxy.resume();
				// deleted by its owner id once the database answers, long before its minute of lease
				await().atMost(Duration.ofSeconds(30))
					.until(() -> jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE
							+ " WHERE lock_key = 'reply-lost'", Integer.class) == 0);
			}
		}
	}

	@Test
	void anAcquisitionWhoseConnectionIsHandedOutToAStalledServerReturnsWithinItsBound() throws Exception {
		long[] measured = stalledAcquisition(false);
		System.out.println("stalled pool, the application's pool (Hikari's defaults): acquisition returned after "
				+ measured[0] + " ms (bound " + measured[1] + " ms)");
		assertThat(measured[0]).isLessThanOrEqualTo(measured[1]);
	}

	@Test
	void anAcquisitionWhoseConnectionIsHandedOutByItsOwnPoolToAStalledServerReturnsWithinItsBound() throws Exception {
		long[] measured = stalledAcquisition(true);
		System.out.println("stalled pool, db-lock's own pool: acquisition returned after " + measured[0]
				+ " ms (bound " + measured[1] + " ms)");
		assertThat(measured[0]).isLessThanOrEqualTo(measured[1]);
	}

	/**
	 * A 3 s acquisition with a 1 s statement timeout while every byte to the database is
	 * stalled, from a pool with Hikari's defaults (30 s connection timeout, 5 s validation
	 * timeout) that validates every connection it hands out (as it does one idle for over
	 * 500 ms, here made certain): how long it took, and its bound (the wait, the statement
	 * timeout, the validation timeout of the pool it draws from and a second of slack).
	 */
	private long[] stalledAcquisition(boolean ownPool) throws Exception {
		TestDatabase.Connection settings = database().connection();
		try (HikariDataSource direct = database().dataSource(2); StallingProxy proxy = StallingProxy.before(settings)) {
			HikariConfig config = proxy.poolConfig(settings, 2);
			String bypass = System.setProperty("com.zaxxer.hikari.aliveBypassWindowMs", "-1");
			HikariDataSource proxied = new HikariDataSource(config);
			DbLockConnectionPool own = ownPool ? new DbLockConnectionPool(proxied, 2, Duration.ofSeconds(1)) : null;
			if (bypass != null) {
				System.setProperty("com.zaxxer.hikari.aliveBypassWindowMs", bypass);
			}
			else {
				System.clearProperty("com.zaxxer.hikari.aliveBypassWindowMs");
			}
			HikariDataSource lockPool = (own != null) ? own.dataSource().unwrap(HikariDataSource.class) : proxied;
			Duration wait = Duration.ofSeconds(3);
			Duration statementTimeout = Duration.ofSeconds(1);
			try (proxied;
					LockEngine node = new LockEngine(
							new JdbcLockRepository(lockPool, database().dialect(direct), statementTimeout),
							LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
				node.acquire(LockRequest.of("warm-up", Duration.ZERO, Duration.ofSeconds(30))).close();
				proxy.stall();
				long start = System.nanoTime();
				try {
					node.acquire(LockRequest.of("stalled-pool", wait, Duration.ofSeconds(30))).close();
				}
				catch (DbLockException ex) {
					// not acquired: what is measured is when it returned
				}
				long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
				proxy.resume();
				return new long[] { millis, wait.plus(statementTimeout)
					.plusMillis(lockPool.getValidationTimeout())
					.plusSeconds(1)
					.toMillis() };
			}
			finally {
				if (own != null) {
					own.close();
				}
			}
		}
	}

	/** How far the lock table's token source has counted: it never goes back, whatever happens to rows. */
	private long tokensDrawn(JdbcTemplate jdbc) {
		if (database() == TestDatabase.POSTGRESQL) {
			return jdbc.queryForObject("SELECT last_value FROM " + TestDatabase.TABLE + "_token_seq", Long.class);
		}
		return jdbc.queryForObject("SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
				+ "AND TABLE_NAME = '" + TestDatabase.TABLE + "'", Long.class);
	}

	@Test
	void aStalledNodeLosesItsLeaseAndItsWriteIsFencedOff() throws Exception {
		TestDatabase.Connection settings = database().connection();
		try (HikariDataSource dataSource = database().dataSource(4);
				StallingProxy proxy = StallingProxy.before(settings);
				LockEngine other = new LockEngine(new JdbcLockRepository(dataSource, database().dialect(dataSource)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("DROP TABLE IF EXISTS stall_counter");
			jdbc.execute("DROP TABLE IF EXISTS stall_log");
			jdbc.execute("DROP TABLE IF EXISTS stall_signal");
			jdbc.execute("CREATE TABLE stall_counter (id INT PRIMARY KEY, counter_value BIGINT, fence BIGINT)");
			jdbc.execute("CREATE TABLE stall_log (id " + (database() == TestDatabase.POSTGRESQL ? "BIGSERIAL"
					: "BIGINT AUTO_INCREMENT") + " PRIMARY KEY, token BIGINT)");
			jdbc.execute("CREATE TABLE stall_signal (phase INT)");
			jdbc.update("INSERT INTO stall_counter VALUES (1, 0, 0)");
			jdbc.update("INSERT INTO stall_signal VALUES (0)");
			String proxied = proxy.url(settings);
			NodeSupport.Node stalled = NodeSupport.start(StalledNode.class,
					new TestDatabase.Connection(proxied, settings.user(), settings.password(), false));
			try {
				NodeSupport.awaitSignal(jdbc, "SELECT phase FROM stall_signal", 1);
				proxy.stall();
				long stalledAt = System.nanoTime();
				try (LockHandle taken = other.acquire(
						new LockRequest("stalled", Duration.ofSeconds(60), Duration.ofSeconds(30), true, Duration.ZERO))) {
					System.out.println("stall: taken over " + Duration.ofNanos(System.nanoTime() - stalledAt).toMillis()
							+ " ms after the stall (the stalled lease is " + StalledNode.LEASE.toMillis() + " ms)");
					TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
					assertThat(StalledNode.fencedWrite(transaction, jdbc, taken.fencingToken())).isTrue();
					jdbc.update("UPDATE stall_signal SET phase = 2");
					proxy.resume();
					Map<String, String> result = NodeSupport.values(NodeSupport.finish(stalled));
					System.out.println("stall: " + result);
					assertThat(result).containsEntry("firstAccepted", "true")
						.containsEntry("heldAfterStall", "false")
						.containsEntry("lostReported", "true")
						.containsEntry("staleWriteAccepted", "false");
					// the stalled node's release did not touch the new holder's row
					assertThat(taken.isHeld()).isTrue();
					assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE
							+ " WHERE lock_key = 'stalled' AND token = ?", Integer.class, taken.fencingToken() >> 16))
						.isEqualTo(1);
				}
			}
			finally {
				proxy.resume();
				stalled.process().destroyForcibly();
			}
			List<Long> tokens = jdbc.queryForList("SELECT token FROM stall_log ORDER BY id", Long.class);
			assertThat(tokens).hasSize(2).isSorted().doesNotHaveDuplicates();
		}
	}

}
