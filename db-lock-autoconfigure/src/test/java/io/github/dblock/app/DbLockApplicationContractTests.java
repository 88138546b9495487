package io.github.dblock.app;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;

import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * db-lock as a user runs it: two Spring applications (two nodes) on one database, each
 * with its own pool and engine, calling {@code @DbLock} methods from many threads.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DbLockApplicationContractTests {

	private ConfigurableApplicationContext nodeA;

	private ConfigurableApplicationContext nodeB;

	private JdbcTemplate jdbc;

	protected abstract TestDatabase database();

	@BeforeAll
	void startNodes() {
		database().dataSource(2).close();
		this.nodeA = start("node-a");
		this.nodeB = start("node-b");
		this.jdbc = this.nodeA.getBean(JdbcTemplate.class);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_counter (id INT PRIMARY KEY, counter_value BIGINT)");
	}

	@AfterAll
	void stopNodes() {
		for (ConfigurableApplicationContext node : new ConfigurableApplicationContext[] { this.nodeA, this.nodeB }) {
			if (node != null) {
				node.close();
			}
		}
	}

	@BeforeEach
	void reset() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		this.jdbc.update("DELETE FROM db_lock_test_counter");
		this.jdbc.update("INSERT INTO db_lock_test_counter (id, counter_value) VALUES (1, 0), (2, 0)");
		CounterService.inside.set(0);
		CounterService.overlaps.set(0);
	}

	@Test
	void twoNodesNeverRunTheMethodForOneKeyAtOnce() throws Exception {
		int threadsPerNode = 8;
		int callsPerThread = 10;
		runOnBothNodes(threadsPerNode, (service) -> {
			for (int i = 0; i < callsPerThread; i++) {
				service.increment(1);
			}
		});
		assertThat(CounterService.overlaps).hasValue(0);
		assertThat(counter(1)).isEqualTo(2L * threadsPerNode * callsPerThread);
	}

	@Test
	void differentKeysRunInParallel() throws Exception {
		CountDownLatch entered = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Thread holder = new Thread(() -> {
			try {
				service(this.nodeA).hold(1, entered, release);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		holder.start();
		assertThat(entered.await(1, TimeUnit.MINUTES)).isTrue();
		AtomicBoolean ran = new AtomicBoolean();
		service(this.nodeB).run(2, () -> ran.set(true));
		assertThat(ran).isTrue();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.nodeB.getBean(DbLockTemplate.class).acquire("order:1", Duration.ZERO, null));
		release.countDown();
		holder.join();
	}

	@Test
	void withTransactionalTheLockOutlivesTheCommitAndNoUpdateIsLost() throws Exception {
		int threadsPerNode = 6;
		int callsPerThread = 8;
		AtomicInteger committedWithoutLock = new AtomicInteger();
		runOnBothNodes(threadsPerNode, (service) -> {
			for (int i = 0; i < callsPerThread; i++) {
				service.incrementInTransaction(1, () -> {
					if (lockRows("counter:1") == 0) {
						committedWithoutLock.incrementAndGet();
					}
				});
			}
		});
		assertThat(committedWithoutLock).hasValue(0);
		assertThat(CounterService.overlaps).hasValue(0);
		assertThat(counter(1)).isEqualTo(2L * threadsPerNode * callsPerThread);
	}

	@Test
	void calledInsideAnOuterTransactionTheLockOutlivesItsCommitAndNoUpdateIsLost() throws Exception {
		int threadsPerNode = 6;
		int callsPerThread = 8;
		AtomicInteger committedWithoutLock = new AtomicInteger();
		runOnBothNodes(threadsPerNode, (service) -> {
			TransactionTemplate outer = new TransactionTemplate(
					(service == service(this.nodeA) ? this.nodeA : this.nodeB).getBean(PlatformTransactionManager.class));
			for (int i = 0; i < callsPerThread; i++) {
				// the method's @Transactional joins the outer transaction, which commits after the method returns
				outer.executeWithoutResult((status) -> service.incrementInTransaction(1, () -> {
					if (lockRows("counter:1") == 0) {
						committedWithoutLock.incrementAndGet();
					}
				}));
			}
		});
		assertThat(committedWithoutLock).hasValue(0);
		assertThat(CounterService.overlaps).hasValue(0);
		assertThat(counter(1)).isEqualTo(2L * threadsPerNode * callsPerThread);
		assertThat(lockRows("counter:1")).isZero();
	}

	@Test
	void theLockCommitsOnItsOwnAndARolledBackCallerLeavesNoLockBehind() {
		TransactionTemplate transaction = new TransactionTemplate(this.nodeA.getBean(PlatformTransactionManager.class));
		AtomicInteger seenFromNodeB = new AtomicInteger(-1);
		transaction.executeWithoutResult((status) -> {
			this.jdbc.update("UPDATE db_lock_test_counter SET counter_value = 99 WHERE id = 2");
			service(this.nodeA).run(7, () -> seenFromNodeB.set(lockRowsSeenBy(this.nodeB, "order:7")));
			status.setRollbackOnly();
		});
		assertThat(seenFromNodeB).hasValue(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> lockRows("order:7") == 0);
		assertThat(counter(2)).isZero();
		try (LockHandle lock = this.nodeB.getBean(DbLockTemplate.class).acquire("order:7", Duration.ZERO, null)) {
			assertThat(lock.isHeld()).isTrue();
		}
	}

	@Test
	void zeroWaitFailsFastAndAWaitFailsNotBeforeItEnds() {
		try (LockHandle held = this.nodeB.getBean(DbLockTemplate.class).acquire("report", null, null)) {
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(service(this.nodeA)::failFast)
				.withMessageContaining("'report'");
			long start = System.nanoTime();
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(service(this.nodeA)::waitHalfASecond);
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
		}
	}

	@Test
	void theDefaultNameIsClassAndMethod() {
		AtomicInteger rows = new AtomicInteger();
		service(this.nodeA).nameOnly(() -> rows.set(lockRows("CounterService.nameOnly")));
		assertThat(rows).hasValue(1);
	}

	@Test
	void anUncontendedCycleSendsAtMostTwoStatementsToTheServer() throws Exception {
		org.junit.jupiter.api.Assumptions.assumeTrue(database().countsQuestions(),
				"only MariaDB and MySQL count the statements they receive");
		try (ConfigurableApplicationContext node = start("counted", "spring.datasource.hikari.maximum-pool-size=2",
				"spring.datasource.hikari.minimum-idle=1")) {
			DbLockTemplate template = node.getBean(DbLockTemplate.class);
			CounterService service = service(node);
			DataSource dataSource = node.getBean(DataSource.class);
			// with one connection every statement runs in one server session, whose counter
			// sees all it receives (autocommit, commit, isolation changes too) and no other client's
			node.getBean(HikariDataSource.class).getHikariConfigMXBean().setMaximumPoolSize(1);
			node.getBean(HikariDataSource.class).getHikariPoolMXBean().softEvictConnections();
			int cycles = 100;
			// a new key every cycle
			AtomicInteger ids = new AtomicInteger(1000);
			Runnable viaTemplate = () -> template.acquire("counted:" + ids.incrementAndGet(), null, null).close();
			Runnable viaAnnotation = () -> service.run(ids.incrementAndGet(), () -> {
			});
			for (Runnable cycle : List.of(viaTemplate, viaAnnotation)) {
				for (int i = 0; i < 10; i++) {
					cycle.run();
				}
				awaitNoLockRows();
				long first = sessionQuestions(dataSource);
				long before = sessionQuestions(dataSource);
				for (int i = 0; i < cycles; i++) {
					cycle.run();
				}
				// the last releases' deletes are counted too
				awaitNoLockRows();
				// each SHOW STATUS counts itself: subtract what one costs
				long statements = sessionQuestions(dataSource) - before - (before - first);
				// an insert each, and deletes that releases may share
				assertThat(statements).isBetween((long) cycles, 2L * cycles);
			}
		}
	}

	private static long sessionQuestions(DataSource dataSource) throws Exception {
		try (Connection connection = dataSource.getConnection();
				Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SHOW SESSION STATUS LIKE 'Questions'")) {
			rs.next();
			return rs.getLong(2);
		}
	}

	private ConfigurableApplicationContext start(String name, String... properties) {
		TestDatabase.Connection settings = database().connection();
		return new SpringApplicationBuilder(CounterApplication.class).web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties("spring.application.name=" + name, "spring.datasource.url=" + settings.url(),
					"spring.datasource.username=" + settings.user(), "spring.datasource.password=" + settings.password(),
					"spring.datasource.hikari.maximum-pool-size=12", "spring.flyway.enabled=false")
			.properties(properties)
			.run();
	}

	private static CounterService service(ConfigurableApplicationContext node) {
		return node.getBean(CounterService.class);
	}

	private long counter(int id) {
		return this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_counter WHERE id = ?", Long.class, id);
	}

	/** Waits, through another data source, for the rows of released locks to be gone. */
	private void awaitNoLockRows() {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE, Integer.class) == 0);
	}

	private int lockRows(String key) {
		return lockRowsSeenBy(this.nodeB, key);
	}

	private static int lockRowsSeenBy(ConfigurableApplicationContext node, String key) {
		return node.getBean(JdbcTemplate.class)
			.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key = ?", Integer.class, key);
	}

	private void runOnBothNodes(int threadsPerNode, ServiceTask task) throws Exception {
		Concurrently.run(2 * threadsPerNode, (thread) -> task.run(service((thread % 2 == 0) ? this.nodeA : this.nodeB)));
	}

	@FunctionalInterface
	interface ServiceTask {

		void run(CounterService service) throws Exception;

	}

}
