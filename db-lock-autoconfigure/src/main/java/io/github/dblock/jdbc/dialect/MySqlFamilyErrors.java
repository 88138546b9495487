package io.github.dblock.jdbc.dialect;

import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;

/**
 * MySQL's and MariaDB's errors. Spring maps InnoDB's lock-wait timeout (1205), deadlock
 * (1213, also how a Galera member reports a certification conflict) and {@code NOWAIT}
 * (3572); left to map here are a Galera member not ready for applications (1047, while it
 * joins or is desynced), which refused the statement before running it: the pool evicts
 * that connection (its SQLState is of class 08), and the next attempt may reach another
 * member; and InnoDB's "failed to read auto-increment value" (1467), which is how it reports
 * a deadlock or a lock-wait timeout on a table's AUTO-INC lock (taken for the whole
 * statement by an {@code INSERT ... SELECT} with {@code innodb_autoinc_lock_mode} 0 or 1):
 * the statement did not run.
 */
final class MySqlFamilyErrors extends SqlErrors {

	private static final int DEADLOCK = 1213;

	private static final int LOCK_WAIT_TIMEOUT = 1205;

	/** ER_AUTOINC_READ_FAILED: a deadlock or lock-wait timeout on the AUTO-INC lock. */
	private static final int AUTOINC_LOCK_FAILED = 1467;

	/** ER_BINLOG_STMT_MODE_AND_ROW_ENGINE: a statement-based binary log and READ COMMITTED. */
	private static final int STATEMENT_BINLOG = 1665;

	private final MySqlFamilyInspection inspection;

	MySqlFamilyErrors(MySqlFamilyInspection inspection) {
		super(Set.of(1047, AUTOINC_LOCK_FAILED));
		this.inspection = inspection;
	}

	/**
	 * A deadlock, which InnoDB ends by rolling back the victim's whole transaction; a
	 * lock-wait timeout on a server with {@code innodb_rollback_on_timeout=ON} (read from the
	 * server when one happens: it is not dynamic, so it is the server's setting since it
	 * started).
	 */
	@Override
	public @Nullable String rolledBackTransaction(JdbcOperations jdbc, Throwable failure) {
		if (hasErrorCode(failure, DEADLOCK)) {
			return "a deadlock with another transaction (error 1213), which InnoDB ends by rolling back one of them";
		}
		if (hasErrorCode(failure, LOCK_WAIT_TIMEOUT) && this.inspection.rollbackOnTimeout(jdbc)) {
			return "its wait ran out (error 1205) on a server with innodb_rollback_on_timeout=ON";
		}
		return null;
	}

	@Override
	public boolean refusesReadCommittedWrites(Throwable failure) {
		return hasErrorCode(failure, STATEMENT_BINLOG);
	}

}
