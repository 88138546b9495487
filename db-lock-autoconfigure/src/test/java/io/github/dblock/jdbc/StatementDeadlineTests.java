package io.github.dblock.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.LockRequest;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link StatementDeadline}: the engine opens one for each call and closes it after, and
 * deadlines nest. What a deadline does to statements is in the repository contract.
 */
class StatementDeadlineTests {

	private static final long STATEMENT = 2_000;

	/** A statement that may wait this long in the server: far longer than any call here. */
	private static final long SERVER_WAIT = 60_000;

	@Test
	void outsideACallAStatementHasItsWholeLimit() {
		assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isEqualTo(STATEMENT + SERVER_WAIT);
	}

	@Test
	void deadlinesNestAndCloseInTurn() {
		long now = System.nanoTime();
		try (StatementDeadline outer = StatementDeadline.open(now + Duration.ofSeconds(10).toNanos())) {
			try (StatementDeadline inner = StatementDeadline.open(now)) {
				assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isBetween(0L, STATEMENT);
			}
			assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isBetween(STATEMENT, STATEMENT + 10_000);
		}
		assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isEqualTo(STATEMENT + SERVER_WAIT);
	}

	@Test
	void aDeadlineOpenedAtMostKeepsAnEarlierOneInForce() {
		long now = System.nanoTime();
		try (StatementDeadline outer = StatementDeadline.open(now - Duration.ofSeconds(1).toNanos())) {
			try (StatementDeadline inner = StatementDeadline.openAtMost(now)) {
				assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isBetween(0L, STATEMENT - 1_000);
			}
		}
		try (StatementDeadline outer = StatementDeadline.open(now + Duration.ofSeconds(10).toNanos())) {
			try (StatementDeadline inner = StatementDeadline.openAtMost(now)) {
				assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isBetween(0L, STATEMENT);
			}
			assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isBetween(STATEMENT, STATEMENT + 10_000);
		}
		assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isEqualTo(STATEMENT + SERVER_WAIT);
	}

	@Test
	void theEngineOpensADeadlineOfTheWaitPlusTheStatementTimeoutForEachCall() {
		List<Long> seen = new CopyOnWriteArrayList<>();
		try (HikariDataSource dataSource = TestDatabase.H2.dataSource(2)) {
			JdbcLockRepository repository = new JdbcLockRepository(dataSource, TestDatabase.H2.dialect(dataSource),
					Duration.ofMillis(STATEMENT)) {
				@Override
				public Optional<Lease> tryAcquire(String key, String owner, Duration lease) {
					seen.add(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT));
					return super.tryAcquire(key, owner, lease);
				}
			};
			try (LockEngine engine = new LockEngine(repository,
					LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(50))))) {
				Duration wait = Duration.ofSeconds(10);
				try (LockHandle handle = engine
					.acquire(new LockRequest("deadline", wait, Duration.ofSeconds(30), false, Duration.ZERO))) {
					assertThat(handle.isHeld()).isTrue();
				}
				// a statement of the call had its wait plus the statement timeout at most, not the server wait
				assertThat(seen).hasSize(1);
				assertThat(seen.get(0)).isPositive().isLessThanOrEqualTo(STATEMENT + wait.toMillis());
				// and the deadline closed with the call
				assertThat(StatementDeadline.millisLeft(STATEMENT, SERVER_WAIT)).isEqualTo(STATEMENT + SERVER_WAIT);
			}
		}
	}

}
