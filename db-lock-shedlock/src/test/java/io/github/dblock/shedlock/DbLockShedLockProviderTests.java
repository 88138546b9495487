package io.github.dblock.shedlock;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockContext;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.support.DbLockTemplate;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DbLockShedLockProvider} on an embedded H2 database, with two nodes (two
 * engines, each its own owner) on one lock table: ShedLock's lock configuration as db-lock
 * honours it, and what a task under ShedLock's executor sees of its lock.
 */
class DbLockShedLockProviderTests {

	private static final AtomicLong databases = new AtomicLong();

	private static final String TABLE = "db_lock";

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private SqlDialect dialect;

	private final List<LockEngine> engines = new ArrayList<>();

	private DbLockShedLockProvider node;

	private DbLockShedLockProvider otherNode;

	@BeforeEach
	void createNodes() {
		this.dataSource = new HikariDataSource();
		this.dataSource.setJdbcUrl("jdbc:h2:mem:shedlock" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1");
		this.dataSource.setUsername("sa");
		this.dataSource.setMaximumPoolSize(6);
		this.dialect = SqlDialects.detect(this.dataSource, TABLE);
		new DbLockSchemaMigration(this.dataSource, this.dialect).afterPropertiesSet();
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.node = provider();
		this.otherNode = provider();
	}

	private DbLockShedLockProvider provider() {
		LockEngine engine = new LockEngine(new JdbcLockRepository(this.dataSource, this.dialect),
				LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))));
		this.engines.add(engine);
		return new DbLockShedLockProvider(engine, new DbLockTemplate(engine, "", Duration.ofSeconds(3),
				Duration.ofSeconds(30)));
	}

	@AfterEach
	void closeNodes() {
		this.engines.forEach(LockEngine::close);
		this.dataSource.close();
	}

	@Test
	void lockAtLeastForKeepsTheKeyTakenUntilItHasPassed() {
		SimpleLock lock = this.node.lock(configuration("report", Duration.ofSeconds(30), Duration.ofSeconds(1))).orElseThrow();
		lock.unlock();
		// the row stays, its lease cut to the minimum hold from its acquisition
		Timestamp[] row = this.jdbc.queryForObject("SELECT acquired_at, expires_at FROM " + TABLE + " WHERE lock_key = ?",
				(rs, n) -> new Timestamp[] { rs.getTimestamp(1), rs.getTimestamp(2) }, "report");
		Instant heldUntil = row[0].toInstant().plusSeconds(1);
		assertThat(row[1].toInstant()).isEqualTo(heldUntil);
		assertThat(this.otherNode.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
		assertThat(this.node.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
		AtomicReference<Instant> takenBy = new AtomicReference<>();
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
			Optional<SimpleLock> taken = this.otherNode.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO));
			if (taken.isEmpty()) {
				return false;
			}
			takenBy.set(databaseNow());
			taken.get().unlock();
			return true;
		});
		assertThat(takenBy.get()).isAfterOrEqualTo(heldUntil);
	}

	@Test
	void anUnlockAfterLockAtLeastForFreesTheKeyAtOnce() {
		SimpleLock lock = this.node.lock(configuration("report", Duration.ofSeconds(30), Duration.ofMillis(100)))
			.orElseThrow();
		Instant acquired = this.jdbc.queryForObject("SELECT acquired_at FROM " + TABLE + " WHERE lock_key = ?",
				Timestamp.class, "report").toInstant();
		await().atMost(Duration.ofSeconds(5)).until(() -> databaseNow().isAfter(acquired.plusMillis(100)));
		lock.unlock();
		assertThat(rows("report")).isZero();
		this.otherNode.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
	}

	@Test
	void withoutLockAtLeastForAnUnlockFreesTheKeyAtOnce() {
		this.node.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
		assertThat(rows("report")).isZero();
		this.otherNode.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
	}

	@Test
	void aHeldLockIsSkippedWithoutWaitingAndLockAtMostForIsTheLease() {
		SimpleLock lock = this.node.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
		long start = System.nanoTime();
		assertThat(this.otherNode.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
		Timestamp[] row = this.jdbc.queryForObject("SELECT acquired_at, expires_at FROM " + TABLE + " WHERE lock_key = ?",
				(rs, n) -> new Timestamp[] { rs.getTimestamp(1), rs.getTimestamp(2) }, "report");
		assertThat(Duration.between(row[0].toInstant(), row[1].toInstant())).isEqualTo(Duration.ofSeconds(30));
		lock.unlock();
	}

	@Test
	void aThreadThatHoldsTheLockDoesNotTakeItAgain() {
		SimpleLock lock = this.node.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
		assertThat(this.node.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
		lock.unlock();
		assertThatIllegalStateException().isThrownBy(lock::unlock);
	}

	@Test
	void theTaskReadsItsLockAndFencingTokenThroughDbLockContext() {
		DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(this.node);
		List<LockHandle> seen = new ArrayList<>();
		List<Boolean> held = new ArrayList<>();
		for (int run = 0; run < 2; run++) {
			executor.executeWithLock((Runnable) () -> {
				LockHandle lock = DbLockContext.current().orElseThrow();
				seen.add(lock);
				held.add(lock.isHeld());
			}, configuration("report", Duration.ofSeconds(30), Duration.ZERO));
		}
		assertThat(seen).extracting(LockHandle::key).containsExactly("report", "report");
		assertThat(held).containsExactly(true, true);
		assertThat(seen.get(1).fencingToken()).isGreaterThan(seen.get(0).fencingToken());
		assertThat(DbLockContext.current()).isEmpty();
	}

	@Test
	void extendingTheActiveLockExtendsItsLeaseAndKeepsItsToken() {
		DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(this.node);
		List<Long> tokens = new ArrayList<>();
		List<Instant> expiries = new ArrayList<>();
		Runnable see = () -> {
			LockHandle lock = DbLockContext.current().orElseThrow();
			tokens.add(lock.fencingToken());
			expiries.add(lock.expiresAt());
		};
		executor.executeWithLock((Runnable) () -> {
			see.run();
			LockExtender.extendActiveLock(Duration.ofMinutes(5), Duration.ZERO);
			see.run();
			// a shorter lease than the one it has leaves it as it is
			LockExtender.extendActiveLock(Duration.ofSeconds(1), Duration.ZERO);
			see.run();
			assertThat(this.otherNode.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
		}, configuration("report", Duration.ofSeconds(2), Duration.ZERO));
		assertThat(tokens).hasSize(3).containsOnly(tokens.get(0));
		assertThat(Duration.between(expiries.get(0), expiries.get(1))).isGreaterThan(Duration.ofMinutes(4));
		assertThat(expiries.get(2)).isEqualTo(expiries.get(1));
		assertThat(rows("report")).isZero();
		assertThat(DbLockContext.current()).isEmpty();
	}

	@Test
	void aLockWhoseLeaseEndedCannotBeExtendedAndItsUnlockReportsTheLoss() {
		SimpleLock lock = this.node.lock(configuration("report", Duration.ofMillis(200), Duration.ZERO)).orElseThrow();
		Optional<SimpleLock> taken = await().atMost(Duration.ofSeconds(5))
			.until(() -> this.otherNode.lock(configuration("report", Duration.ofSeconds(30), Duration.ZERO)),
					Optional::isPresent);
		assertThat(lock.extend(Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
		assertThat(rows("report")).isOne();
		taken.get().unlock();
		assertThat(rows("report")).isZero();
	}

	private static LockConfiguration configuration(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
		return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
	}

	private int rows(String key) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TABLE + " WHERE lock_key = ?", Integer.class, key);
	}

	private Instant databaseNow() {
		return this.jdbc.queryForObject("SELECT " + this.dialect.now(), Timestamp.class).toInstant();
	}

}
