package io.github.dblock.jdbc;

import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.testsupport.OwnMariaDb;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lock maintenance (the recovery job's transaction) on a MariaDB server of the test's own
 * whose binary log is statement-based: InnoDB refuses writes at READ COMMITTED there
 * (error 1665), so maintenance runs at the connection's own isolation instead; and the fair,
 * read and write modes' statements sent in one round trip run at the session's isolation.
 */
class MariaDbStatementBinlogTests {

	@Test
	void maintenanceRunsWhereAStatementBasedBinaryLogRefusesReadCommitted() throws Exception {
		try (OwnMariaDb server = OwnMariaDb.startWith("--log-bin=db-lock-test-bin", "--binlog-format=STATEMENT");
				HikariDataSource dataSource = new HikariDataSource()) {
			dataSource.setJdbcUrl(server.url());
			dataSource.setUsername("root");
			dataSource.setMaximumPoolSize(2);
			JdbcLockRepository repository = new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, "db_lock"));
			new DbLockSchemaMigration(dataSource, repository.dialect()).afterPropertiesSet();
			assertThat(repository.tryAcquire("stuck", "stuck-owner", Duration.ofMinutes(5))).isPresent();
			int deleted = repository.connections().inOwnTransaction((jdbc) -> {
				jdbc.queryForList("SELECT lock_key FROM db_lock WHERE lock_key = 'stuck' FOR UPDATE", String.class);
				return jdbc.update("DELETE FROM db_lock WHERE lock_key = 'stuck'");
			});
			System.out.println("maintenance on a statement-based binary log deleted " + deleted + " row(s)");
			assertThat(deleted).isOne();
			assertThat(new JdbcTemplate(dataSource).queryForObject("SELECT COUNT(*) FROM db_lock", Integer.class)).isZero();
			// the fair enqueue and its look, sent in one round trip, and the read and write attempts
			FairLockRepository queue = repository.fairQueue().orElseThrow();
			FairLockRepository.Enqueued first = queue.enqueueAndLook("fair", "fair-1", Duration.ofMinutes(1));
			FairLockRepository.Enqueued second = queue.enqueueAndLook("fair", "fair-2", Duration.ofMinutes(1));
			// the first enqueue created the key's row, and did not look
			assertThat(second.head()).isEqualTo(first.ticket().number());
			assertThat(second.ticket().number()).isGreaterThan(first.ticket().number());
			ReadWriteLockRepository readWrite = repository.readWriteLocks().orElseThrow();
			assertThat(readWrite.tryRead("rw", "reader-1", Duration.ofMinutes(1))).isPresent();
			assertThat(readWrite.tryWrite("rw", "writer-1", Duration.ofMinutes(1), false).lease()).isNull();
		}
	}

}
