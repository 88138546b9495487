package io.github.dblock.nodes;

import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.StallingProxy;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

class PostgreSqlStalledTrafficTests extends StalledTrafficContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

	/**
	 * A lock statement that waits in the server for a row lock (here a commit guard's shared
	 * lock, held by a transaction that does not end) past its network timeout: its caller
	 * gets a failure, and the server does not go on waiting (PostgreSQL does not notice a
	 * closed client while a statement waits for a lock, so each retry would leave a backend,
	 * and its connection slot, waiting): the cancel of the abandoned statement ends it.
	 */
	@Test
	void aLockStatementEndedByItsNetworkTimeoutDoesNotGoOnWaitingInTheServer() throws Exception {
		try (HikariDataSource direct = database().dataSource(4);
				LockEngine holder = engine(direct);
				LockEngine contender = engine(direct);
				Connection blocker = direct.getConnection()) {
			JdbcTemplate jdbc = new JdbcTemplate(direct);
			try (LockHandle held = holder.acquire(LockRequest.of("blocked", Duration.ZERO, Duration.ofMinutes(1)))) {
				blocker.setAutoCommit(false);
				try (Statement statement = blocker.createStatement()) {
					statement.executeQuery("SELECT lock_key FROM " + TestDatabase.TABLE
							+ " WHERE lock_key = 'blocked' FOR SHARE").close();
					assertThatExceptionOfType(DbLockException.class)
						.isThrownBy(() -> contender.acquire(LockRequest.of("blocked", Duration.ZERO, Duration.ofMinutes(1))))
						.withRootCauseInstanceOf(SocketTimeoutException.class);
					// while the shared lock is still held
					await().atMost(Duration.ofSeconds(30))
						.pollInterval(Duration.ofMillis(100))
						.until(() -> jdbc.queryForObject("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = "
								+ "'Lock' AND query LIKE 'INSERT INTO " + TestDatabase.TABLE + " %'", Integer.class) == 0);
				}
				finally {
					blocker.rollback();
				}
			}
		}
	}

	private LockEngine engine(HikariDataSource dataSource) {
		return new LockEngine(new JdbcLockRepository(dataSource, database().dialect(dataSource), Duration.ofSeconds(1)),
				LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))));
	}

	/**
	 * pgjdbc enforces a JDBC query timeout with a cancel request sent on a connection of its
	 * own, which the statement's thread waits for even once its own read has timed out: with
	 * the server unreachable, up to the driver's {@code cancelSignalTimeout} (10 s by
	 * default), past the caller's bound (the fault campaign found callers 2 to 3 s late; this
	 * test took 12.8 to 13.1 s). A lock statement that the stalled server does not answer ends
	 * by its network timeout, with a statement timeout of whole seconds too (the default is
	 * 2 s), within the caller's bound; the cancel of the abandoned statement is sent off its
	 * thread.
	 */
	@Test
	void aLockStatementTheServerDoesNotAnswerEndsByItsNetworkTimeoutWithinTheBound() throws Exception {
		TestDatabase.Connection settings = database().connection();
		try (HikariDataSource direct = database().dataSource(2); StallingProxy proxy = StallingProxy.before(settings);
				HikariDataSource proxied = new HikariDataSource(proxy.poolConfig(settings, 2));
				LockEngine node = engine(proxied)) {
			node.acquire(LockRequest.of("warm-up", Duration.ZERO, Duration.ofSeconds(30))).close();
			// the pool hands the connection just used out again unchecked: the statement is sent
			proxy.stall();
			long start = System.nanoTime();
			assertThatExceptionOfType(DbLockException.class)
				.isThrownBy(() -> node.acquire(LockRequest.of("unanswered", Duration.ZERO, Duration.ofSeconds(30))))
				.withRootCauseInstanceOf(SocketTimeoutException.class);
			long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
			proxy.resume();
			// no wait, the statement timeout, the pool's validation timeout, a second
			assertThat(millis).isLessThanOrEqualTo(1000 + proxied.getValidationTimeout() + 1000);
		}
	}

}
