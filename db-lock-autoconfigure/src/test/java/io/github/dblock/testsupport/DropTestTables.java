package io.github.dblock.testsupport;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Leaves the test databases as the run found them: after the last test of the run (the
 * launcher session, one per surefire fork) drops the tables and sequences the suites
 * created ({@link TestDatabase#TABLE_PREFIX}{@code *}) in the databases named by
 * {@code DB_LOCK_TEST_<DB>_URL}. Registered in
 * {@code META-INF/services/org.junit.platform.launcher.LauncherSessionListener}. The module's
 * tests run in one fork (surefire's default): with several, the first to end would drop
 * the tables under the others.
 */
public class DropTestTables implements LauncherSessionListener {

	@Override
	public void launcherSessionClosed(LauncherSession session) {
		TestDatabase.dropTablesOfThisRun();
	}

}
