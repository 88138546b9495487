package io.github.dblock.nodes;

import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.StallingProxy;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class PostgreSqlStalledTrafficTests extends StalledTrafficContractTests {

	/** The code of PostgreSQL's CancelRequest message, after its length (16). */
	private static final int CANCEL_REQUEST_CODE = 80877102;

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

	/**
	 * pgjdbc enforces a JDBC query timeout with a cancel request sent on a connection of its
	 * own, which the statement's thread waits for even once its own read has timed out: with
	 * the server unreachable, up to the driver's {@code cancelSignalTimeout} (10 s by
	 * default), past the caller's bound (the fault campaign found callers 2 to 3 s late). A
	 * lock statement that the stalled server does not answer ends by its network timeout, with
	 * a statement timeout of whole seconds too (the default is 2 s), and sends no cancel.
	 */
	@Test
	void aLockStatementTheServerDoesNotAnswerEndsByItsNetworkTimeoutWithoutACancel() throws Exception {
		TestDatabase.Connection settings = database().connection();
		try (HikariDataSource direct = database().dataSource(2); StallingProxy proxy = StallingProxy.before(settings);
				HikariDataSource proxied = new HikariDataSource(proxy.poolConfig(settings, 2));
				LockEngine node = new LockEngine(
						new JdbcLockRepository(proxied, database().dialect(direct), Duration.ofSeconds(1)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
			node.acquire(LockRequest.of("warm-up", Duration.ZERO, Duration.ofSeconds(30))).close();
			int before = proxy.openings().size();
			// the pool hands the connection just used out again unchecked: the statement is sent
			proxy.stall();
			assertThatExceptionOfType(DbLockException.class)
				.isThrownBy(() -> node.acquire(LockRequest.of("unanswered", Duration.ZERO, Duration.ofSeconds(30))))
				.withRootCauseInstanceOf(SocketTimeoutException.class);
			proxy.resume();
			assertThat(proxy.openings().subList(before, proxy.openings().size()))
				.as("cancel requests sent")
				.noneMatch((opening) -> opening.length == 8 && ByteBuffer.wrap(opening).getInt(4) == CANCEL_REQUEST_CODE);
		}
	}

}
