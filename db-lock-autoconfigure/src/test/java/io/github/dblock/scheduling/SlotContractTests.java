package io.github.dblock.scheduling;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.JdbcSlotRepository;
import io.github.dblock.jdbc.LockConnections;
import io.github.dblock.jdbc.SlotClaim;
import io.github.dblock.jdbc.SlotRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.DatabaseClock;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract of the slots of {@code @OncePerSlot} on a real database, with real threads;
 * two repositories on two pools play two nodes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SlotContractTests {

	private static final String TABLE = TestDatabase.TABLE + "_slot";

	private static final Duration RETENTION = Duration.ofDays(1);

	private HikariDataSource nodeAData;

	private HikariDataSource nodeBData;

	private JdbcTemplate jdbc;

	private SqlDialect dialect;

	private SlotRepository nodeA;

	private SlotRepository nodeB;

	protected abstract TestDatabase database();

	@BeforeAll
	void createNodes() {
		this.nodeAData = database().dataSource(10);
		this.nodeBData = database().dataSource(10);
		this.jdbc = new JdbcTemplate(this.nodeAData);
		this.dialect = database().dialect(this.nodeAData);
		this.nodeA = new JdbcSlotRepository(new LockConnections(this.nodeAData, this.dialect, Duration.ofSeconds(5)));
		this.nodeB = new JdbcSlotRepository(
				new LockConnections(this.nodeBData, database().dialect(this.nodeBData), Duration.ofSeconds(5)));
	}

	@AfterAll
	void closeNodes() {
		if (this.nodeAData != null) {
			this.nodeAData.close();
		}
		if (this.nodeBData != null) {
			this.nodeBData.close();
		}
	}

	@BeforeEach
	void emptyTable() {
		this.jdbc.update("DELETE FROM " + TABLE);
	}

	private int rows(String task) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TABLE + " WHERE task = ?", Integer.class, task);
	}

	@Test
	void twoNodesRacingOnEachSlotFromManyThreadsClaimItExactlyOnce() throws Exception {
		int threads = 16;
		int slots = 60;
		Instant first = Instant.parse("2026-01-01T00:00:00Z");
		AtomicIntegerArray winners = new AtomicIntegerArray(slots);
		AtomicInteger claims = new AtomicInteger();
		Map<String, AtomicInteger> winsByNode = new ConcurrentHashMap<>();
		CyclicBarrier round = new CyclicBarrier(threads);
		Concurrently.run(threads, (thread) -> {
			SlotRepository node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			String owner = (thread % 2 == 0) ? "node-a" : "node-b";
			for (int slot = 0; slot < slots; slot++) {
				Instant slotAt = first.plusSeconds(5L * slot);
				// every thread of both nodes asks for the slot at once
				round.await(1, TimeUnit.MINUTES);
				SlotClaim claim = node.claim("race", owner + "-" + thread, (now) -> slotAt, RETENTION);
				claims.incrementAndGet();
				assertThat(claim.slot()).isEqualTo(slotAt);
				if (claim.claimed()) {
					winners.incrementAndGet(slot);
					winsByNode.computeIfAbsent(owner, (key) -> new AtomicInteger()).incrementAndGet();
				}
			}
		});
		int doubles = 0;
		int unclaimed = 0;
		for (int slot = 0; slot < slots; slot++) {
			doubles += Math.max(0, winners.get(slot) - 1);
			unclaimed += (winners.get(slot) == 0) ? 1 : 0;
		}
		System.out.println("slot race on " + database() + ": " + slots + " slots, " + claims + " claims by " + threads
				+ " threads of 2 nodes, wins " + winsByNode + ", doubles " + doubles + ", unclaimed " + unclaimed);
		assertThat(claims.get()).isEqualTo(threads * slots);
		assertThat(doubles).isZero();
		assertThat(unclaimed).isZero();
		assertThat(rows("race")).isEqualTo(slots);
	}

	/**
	 * Two calls 0.4 s either side of a slot of a 1 s period, on the database's clock: the
	 * nearest slot maps them to one slot, which runs once; a floor would map them to two.
	 */
	@Test
	void callsWithinHalfAPeriodEitherSideOfASlotClaimTheSameSlot() {
		SlotSchedule everySecond = SlotSchedule.every(Duration.ofSeconds(1));
		Duration offset = Duration.between(Instant.now(), DatabaseClock.now(this.jdbc, this.dialect));
		Instant slot = Instant.now().plus(offset).plusSeconds(2).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
		UnaryOperator<Instant> floor = (now) -> now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS);

		awaitDatabaseTime(slot.minusMillis(400), offset);
		SlotClaim early = this.nodeA.claim("near", "node-a", everySecond::slotAt, RETENTION);
		SlotClaim earlyFloor = this.nodeA.claim("floor", "node-a", floor, RETENTION);
		awaitDatabaseTime(slot.plusMillis(400), offset);
		SlotClaim late = this.nodeB.claim("near", "node-b", everySecond::slotAt, RETENTION);
		SlotClaim lateFloor = this.nodeB.claim("floor", "node-b", floor, RETENTION);
		awaitDatabaseTime(slot.plusMillis(600), offset);
		SlotClaim next = this.nodeB.claim("near", "node-b", everySecond::slotAt, RETENTION);

		// the calls happened where they were meant to, by the database's clock
		assertThat(early.databaseTime()).isBetween(slot.minusMillis(500), slot.minusMillis(1));
		assertThat(late.databaseTime()).isBetween(slot.plusMillis(1), slot.plusMillis(499));
		assertThat(next.databaseTime()).isAfter(slot.plusMillis(500));
		assertThat(early.slot()).isEqualTo(slot);
		assertThat(early.claimed()).isTrue();
		assertThat(late.slot()).isEqualTo(slot);
		assertThat(late.claimed()).isFalse();
		assertThat(next.slot()).isEqualTo(slot.plusSeconds(1));
		assertThat(next.claimed()).isTrue();
		// with a floor instead, the same two calls both run: the double run this rounding avoids
		assertThat(earlyFloor.claimed()).isTrue();
		assertThat(lateFloor.claimed()).isTrue();
		assertThat(earlyFloor.slot()).isNotEqualTo(lateFloor.slot());
	}

	/** Parks until the database's clock, read here as this JVM's plus its offset, passes a time. */
	private static void awaitDatabaseTime(Instant time, Duration offset) {
		long millis;
		while ((millis = Duration.between(Instant.now().plus(offset), time).toMillis()) >= 0) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis + 1));
		}
	}

	@Test
	void aWonClaimDeletesItsTasksSlotsOlderThanTheRetention() {
		Instant slot = Instant.parse("2026-06-01T12:00:00Z");
		for (Instant old : List.of(slot.minus(Duration.ofDays(3)), slot.minus(Duration.ofHours(2)),
				slot.minus(Duration.ofMinutes(59)), slot.minus(Duration.ofMinutes(1)))) {
			assertThat(this.nodeA.claim("kept", "node-a", (now) -> old, Duration.ofDays(30)).claimed()).isTrue();
			assertThat(this.nodeA.claim("other", "node-a", (now) -> old, Duration.ofDays(30)).claimed()).isTrue();
		}
		assertThat(rows("kept")).isEqualTo(4);
		// a lost claim deletes nothing
		assertThat(this.nodeB.claim("kept", "node-b", (now) -> slot.minus(Duration.ofMinutes(1)), Duration.ofHours(1))
			.claimed()).isFalse();
		assertThat(rows("kept")).isEqualTo(4);
		assertThat(this.nodeB.claim("kept", "node-b", (now) -> slot, Duration.ofHours(1)).claimed()).isTrue();
		assertThat(this.nodeB.claims("kept", 10)).extracting(SlotRepository.ClaimedSlot::slotAt)
			.containsExactly(slot, slot.minus(Duration.ofMinutes(1)), slot.minus(Duration.ofMinutes(59)));
		assertThat(this.nodeB.claims("kept", 10).get(0).owner()).isEqualTo("node-b");
		// another task's slots stay
		assertThat(rows("other")).isEqualTo(4);
	}

	@Test
	void aClaimRecordsTheDatabasesTime() {
		Instant before = DatabaseClock.now(this.jdbc, this.dialect);
		SlotClaim claim = this.nodeA.claim("time", "node-a", SlotSchedule.every(Duration.ofMinutes(1))::slotAt, RETENTION);
		Instant after = DatabaseClock.now(this.jdbc, this.dialect);
		assertThat(claim.databaseTime()).isBetween(before, after);
		SlotRepository.ClaimedSlot row = this.nodeA.claims("time", 1).get(0);
		assertThat(row.claimedAt()).isBetween(before, after);
		assertThat(row.slotAt()).isEqualTo(claim.slot());
		assertThat(this.nodeA.unavailable()).isNull();
	}

	/** A claim that fails (here: no database to reach) is taken as claimed: the method does not run. */
	@Test
	void aMethodWhoseClaimFailsDoesNotRun() {
		String url = database().connection().url();
		HikariConfig config = new HikariConfig();
		// a port nothing listens on
		config.setJdbcUrl(url.startsWith("jdbc:h2:") ? "jdbc:h2:tcp://127.0.0.1:9/mem:none"
				: url.replaceFirst("//[^/]+/", "//127.0.0.1:9/"));
		config.setUsername(database().connection().user());
		config.setPassword(database().connection().password());
		config.setInitializationFailTimeout(-1);
		config.setConnectionTimeout(250);
		try (HikariDataSource unreachable = new HikariDataSource(config)) {
			Job job = proxy(new Job(),
					new JdbcSlotRepository(new LockConnections(unreachable, this.dialect, Duration.ofSeconds(1))));
			assertThat(job.report()).isZero();
			assertThat(job.runs()).isZero();
			// the same job on the database runs, once in its slot
			Job reachable = proxy(new Job(), this.nodeA);
			assertThat(reachable.report()).isEqualTo(1);
			assertThat(reachable.report()).isZero();
			assertThat(reachable.runs()).isEqualTo(1);
		}
	}

	/**
	 * A claim whose insert reaches the database and commits, but whose reply is lost: the
	 * call does not run the method (its outcome unknown, the slot is taken as claimed), and
	 * the slot, claimed in fact, runs on no other node either. At most once: here zero times.
	 */
	@Test
	void aClaimWhoseReplyIsLostDoesNotRunAndItsSlotRunsNowhere() throws Exception {
		TestDatabase.Connection settings = database().connection();
		org.junit.jupiter.api.Assumptions.assumeFalse(settings.url().startsWith("jdbc:h2:"),
				"an embedded database has no traffic to stall");
		java.net.URI target = java.net.URI.create(settings.url().substring("jdbc:".length()));
		try (io.github.dblock.testsupport.StallingProxy proxy = new io.github.dblock.testsupport.StallingProxy(
				target.getHost(), target.getPort())) {
			HikariConfig config = new HikariConfig();
			config.setJdbcUrl(settings.url().replace("//" + target.getRawAuthority() + "/",
					"//127.0.0.1:" + proxy.port() + "/"));
			config.setUsername(settings.user());
			config.setPassword(settings.password());
			config.setMaximumPoolSize(2);
			config.setConnectionTimeout(1000);
			try (HikariDataSource proxied = new HikariDataSource(config)) {
				SlotRepository stalled = new JdbcSlotRepository(
						new LockConnections(proxied, this.dialect, Duration.ofSeconds(1)));
				// the replies stop between the read of the database's now and the insert
				SlotRepository losingReplies = new SlotRepository() {

					@Override
					public SlotClaim claim(String task, String owner, UnaryOperator<Instant> slotAt, Duration retention) {
						return stalled.claim(task, owner, (now) -> {
							proxy.stallReplies();
							return slotAt.apply(now);
						}, retention);
					}

					@Override
					public List<SlotRepository.ClaimedSlot> claims(String task, int limit) {
						return stalled.claims(task, limit);
					}

					@Override
					public String unavailable() {
						return stalled.unavailable();
					}

					@Override
					public int maxTaskLength() {
						return stalled.maxTaskLength();
					}

				};
				Job node = proxy(new Job(), losingReplies);
				assertThat(node.report()).isZero();
				assertThat(node.runs()).isZero();
				proxy.resume();
				// the insert did commit: the slot is claimed, by the node that did not run it
				assertThat(rows("report")).isEqualTo(1);
				Job other = proxy(new Job(), this.nodeB);
				assertThat(other.report()).isZero();
				assertThat(other.runs()).isZero();
			}
		}
	}

	private static Job proxy(Job job, SlotRepository slots) {
		ProxyFactory factory = new ProxyFactory(job);
		factory.setProxyTargetClass(true);
		factory.addAdvisor(new OncePerSlotAdvisor(() -> slots, null, "", 255, RETENTION, 0));
		return (Job) factory.getProxy();
	}

	static class Job {

		private final AtomicInteger runs = new AtomicInteger();

		@Scheduled(cron = "0 0 3 * * *")
		@OncePerSlot(name = "report")
		public int report() {
			return this.runs.incrementAndGet();
		}

		int runs() {
			return this.runs.get();
		}

	}


}
