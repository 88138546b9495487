package io.github.dblock.leader;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.LockRow;
import io.github.dblock.leader.LeadershipRevokedEvent.Reason;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.testsupport.StallingProxy;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationEventPublisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A leader cut from its database (every byte to it stalled by a proxy) steps down while its
 * lease is still valid in the database, so before another instance can take the role: at
 * its revoked event, the other instance does not lead and the lock table still names the
 * old leader; then the other instance leads with a larger term.
 */
abstract class StalledLeaderContractTests {

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final Duration POLL = Duration.ofMillis(100);

	protected abstract TestDatabase database();

	/** What the second instance and the table said when the first published its revoked event. */
	private record AtRevoke(Reason reason, long term, boolean otherLeads, Optional<LockRow> row) {
	}

	@Test
	void aLeaderCutFromTheDatabaseStepsDownBeforeItsLeaseEndsThere() throws Exception {
		TestDatabase.Connection settings = database().connection();
		try (HikariDataSource direct = database().dataSource(4); StallingProxy proxy = StallingProxy.before(settings)) {
			HikariConfig config = proxy.poolConfig(settings, 4);
			config.setConnectionTimeout(1000);
			LockRepository repositoryB = new JdbcLockRepository(direct, database().dialect(direct), Duration.ofSeconds(1));
			try (HikariDataSource proxied = new HikariDataSource(config);
					LockEngine engineA = new LockEngine(
							new JdbcLockRepository(proxied, database().dialect(direct), Duration.ofSeconds(1)),
							LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))));
					LockEngine engineB = new LockEngine(repositoryB,
							LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
				String role = "stalled-" + System.nanoTime();
				List<AtRevoke> revoked = new CopyOnWriteArrayList<>();
				List<Long> grantedB = new CopyOnWriteArrayList<>();
				DbLockLeaders[] b = new DbLockLeaders[1];
				ApplicationEventPublisher publisherA = (event) -> {
					if (event instanceof LeadershipRevokedEvent end) {
						// read on the other instance's connections: the stalled one cannot
						revoked.add(new AtRevoke(end.reason(), end.term(), b[0].isLeader(role),
								repositoryB.validRow(DbLockLeaders.KEY_PREFIX + role)));
					}
				};
				ApplicationEventPublisher publisherB = (event) -> {
					if (event instanceof LeadershipGrantedEvent start) {
						grantedB.add(start.term());
					}
				};
				DbLockLeaders a = leaders(engineA, repositoryB, role, publisherA);
				b[0] = leaders(engineB, repositoryB, role, publisherB);
				a.start();
				await().atMost(Duration.ofSeconds(30)).until(() -> a.isLeader(role));
				long termA = a.term(role).orElseThrow();
				String ownerA = repositoryB.validRow(DbLockLeaders.KEY_PREFIX + role).orElseThrow().owner();
				b[0].start();
				try {
					proxy.stall();
					await().atMost(Duration.ofSeconds(30)).until(() -> !revoked.isEmpty());
					AtRevoke atRevoke = revoked.get(0);
					System.out.println("stalled leader: revoked " + atRevoke + ", other leads: " + atRevoke.otherLeads());
					assertThat(atRevoke.reason()).isEqualTo(Reason.LOST);
					assertThat(atRevoke.term()).isEqualTo(termA);
					assertThat(atRevoke.otherLeads()).isFalse();
					// the lease was still valid in the database: no other instance could hold it yet
					assertThat(atRevoke.row()).hasValueSatisfying((row) -> assertThat(row.owner()).isEqualTo(ownerA));
					assertThat(a.isLeader(role)).isFalse();
					await().atMost(Duration.ofSeconds(30)).until(() -> b[0].isLeader(role));
					assertThat(grantedB).hasSize(1);
					assertThat(grantedB.get(0)).isGreaterThan(termA);
				}
				finally {
					proxy.resume();
					b[0].stop();
					a.stop();
				}
			}
		}
	}

	private static DbLockLeaders leaders(LockEngine engine, LockRepository reader, String role,
			ApplicationEventPublisher publisher) {
		DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(1), LEASE);
		return new DbLockLeaders(template, engine, reader, List.of(role), LEASE, POLL, publisher, Map::of);
	}

}
