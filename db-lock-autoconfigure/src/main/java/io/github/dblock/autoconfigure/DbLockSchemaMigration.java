package io.github.dblock.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import io.github.dblock.jdbc.dialect.Database;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationVersion;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.util.ClassUtils;

/**
 * Creates and upgrades the lock table with db-lock's own Flyway migrations
 * ({@link Database#migrationLocation()}), recorded in a history table of their own
 * ({@code <table>_schema_history}) so that the application's migrations and history are
 * untouched. Several instances starting at once are serialized by Flyway's own lock.
 *
 * @since 0.1.0
 */
public class DbLockSchemaMigration implements InitializingBean, BeanClassLoaderAware {

	private final DataSource dataSource;

	private final SqlDialect dialect;

	private ClassLoader classLoader = DbLockSchemaMigration.class.getClassLoader();

	private volatile @Nullable History history;

	/**
	 * Creates the migration.
	 * @param dataSource the application's data source
	 * @param dialect the dialect, naming the migrations' folder and the table
	 */
	public DbLockSchemaMigration(DataSource dataSource, SqlDialect dialect) {
		this.dataSource = dataSource;
		this.dialect = dialect;
	}

	@Override
	public void setBeanClassLoader(ClassLoader classLoader) {
		this.classLoader = classLoader;
	}

	@Override
	public void afterPropertiesSet() {
		checkFlywayModule();
		flyway().migrate();
	}

	/**
	 * db-lock's migrations and their state, for the {@code dblock} actuator endpoint: the
	 * rows of its history table, read with one query at each call, and the migrations of
	 * this version of db-lock that the table lacks, as pending. Read without a Flyway
	 * command, which would check the database again and log its warnings (such as H2's
	 * "newer than verified") at each read; the migration at start-up logs them once. They
	 * are not shown by {@code /actuator/flyway}, which lists the context's {@link Flyway}
	 * beans: a bean of db-lock's would make Spring Boot's Flyway auto-configuration back off
	 * and leave the application's own migrations unrun.
	 * @return every migration, applied or pending, in version order
	 */
	public List<Migration> migrations() {
		History history = history();
		List<Migration> migrations = new ArrayList<>();
		Set<MigrationVersion> recorded = new HashSet<>();
		@Nullable MigrationVersion baseline = null;
		// as Flyway, which does not apply migrations out of order here: one below the last applied is ignored
		@Nullable MigrationVersion lastApplied = null;
		for (Map<String, Object> row : new JdbcTemplate(this.dataSource).queryForList(history.sql())) {
			Object text = row.get("version");
			MigrationVersion version = (text != null) ? MigrationVersion.fromVersion(text.toString()) : null;
			String type = String.valueOf(row.get("type"));
			if (version == null && !"SCHEMA".equals(type)) {
				// Flyway's own marker rows, such as the history table's creation: its info lists none
				continue;
			}
			boolean success = Boolean.TRUE.equals(row.get("success"))
					|| (row.get("success") instanceof Number number && number.intValue() != 0);
			String state;
			if (type.endsWith("BASELINE")) {
				state = "BASELINE";
				baseline = version;
			}
			else if (version == null || history.shipped().containsKey(version)) {
				state = success ? "SUCCESS" : "FAILED";
			}
			else {
				state = (version.isNewerThan(history.latest()) ? "FUTURE_" : "MISSING_") + (success ? "SUCCESS" : "FAILED");
			}
			if (version != null) {
				recorded.add(version);
				if (!type.endsWith("BASELINE") && (lastApplied == null || version.isNewerThan(lastApplied))) {
					lastApplied = version;
				}
			}
			migrations.add(new Migration(version, String.valueOf(row.get("description")), state,
					(row.get("installed_on") instanceof Timestamp installedOn) ? installedOn.toInstant() : null));
		}
		for (Map.Entry<MigrationVersion, String> shipped : history.shipped().entrySet()) {
			MigrationVersion version = shipped.getKey();
			if (!recorded.contains(version)) {
				String state = (baseline != null && !version.isNewerThan(baseline)) ? "BELOW_BASELINE"
						: (lastApplied != null && lastApplied.isNewerThan(version)) ? "IGNORED" : "PENDING";
				migrations.add(new Migration(version, shipped.getValue(), state, null));
			}
		}
		migrations.sort(Comparator.comparing(Migration::order, Comparator.nullsFirst(Comparator.naturalOrder())));
		return migrations;
	}

	private History history() {
		History history = this.history;
		if (history == null) {
			history = History.of(this.dataSource, this.dialect);
			this.history = history;
		}
		return history;
	}

	private Flyway flyway() {
		return Flyway.configure(DbLockSchemaMigration.class.getClassLoader())
			.dataSource(this.dataSource)
			.locations(this.dialect.database().migrationLocation())
			.table(this.dialect.table() + "_schema_history")
			.placeholders(Map.of("table", this.dialect.table()))
			// the application's own tables may already be there: start db-lock's history at 0
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.load();
	}

	/**
	 * Fails with what to add when Flyway's module for the database is missing: db-lock does
	 * not force the modules of every database on its users.
	 */
	private void checkFlywayModule() {
		Database database = this.dialect.database();
		String moduleClass = database.flywayModuleClass();
		if (moduleClass != null && !ClassUtils.isPresent(moduleClass, this.classLoader)) {
			throw new DbLockConfigurationException("db-lock's schema migration on " + database.id()
					+ " needs Flyway's module for that database, which is not on the class path.",
					"Add the dependency org.flywaydb:" + database.flywayModule() + " (its version comes from Spring Boot's "
							+ "dependency management), or set db-lock.schema.migrate=false and create the tables "
							+ "from db-lock's scripts yourself.");
		}
	}

	/**
	 * One of db-lock's schema migrations.
	 * @param version its version, or {@code null} for a history row without one
	 * @param description what it does
	 * @param state its state, named as Flyway's {@code MigrationState} names it:
	 * {@code SUCCESS}, {@code FAILED}, {@code PENDING}, {@code IGNORED} (not applied, below
	 * the last applied), {@code BASELINE}, {@code BELOW_BASELINE}, {@code FUTURE_SUCCESS}
	 * (applied by a later version of db-lock), {@code MISSING_SUCCESS} (applied, but no
	 * longer shipped), or their {@code _FAILED} forms
	 * @param installedOn when it was applied, or {@code null} if it was not
	 */
	public record Migration(@Nullable String version, String description, String state,
			@Nullable Instant installedOn) {

		private Migration(@Nullable MigrationVersion version, String description, String state, @Nullable Instant installedOn) {
			this((version != null) ? version.getVersion() : null, description, state, installedOn);
		}

		private @Nullable MigrationVersion order() {
			return (this.version != null) ? MigrationVersion.fromVersion(this.version) : null;
		}

	}

	/**
	 * The query of the history table and the migrations this version of db-lock ships,
	 * found once.
	 */
	private record History(String sql, Map<MigrationVersion, String> shipped, MigrationVersion latest) {

		private static final Pattern SCRIPT = Pattern.compile("V(.+?)__(.+)\\.sql");

		static History of(DataSource dataSource, SqlDialect dialect) {
			String quote = new JdbcTemplate(dataSource).execute(
					(ConnectionCallback<String>) (connection) -> connection.getMetaData().getIdentifierQuoteString());
			String q = (quote == null || quote.isBlank()) ? "" : quote.strip();
			String sql = "SELECT " + q + "version" + q + ", " + q + "description" + q + ", " + q + "type" + q + ", "
					+ q + "installed_on" + q + ", " + q + "success" + q + " FROM " + q + dialect.table()
					+ "_schema_history" + q + " ORDER BY " + q + "installed_rank" + q;
			Map<MigrationVersion, String> shipped = new TreeMap<>();
			String location = dialect.database().migrationLocation().replaceFirst("^classpath:", "classpath*:");
			try {
				for (Resource script : new PathMatchingResourcePatternResolver(DbLockSchemaMigration.class.getClassLoader())
					.getResources(location + "/V*__*.sql")) {
					Matcher name = SCRIPT.matcher(String.valueOf(script.getFilename()));
					if (name.matches()) {
						shipped.put(MigrationVersion.fromVersion(name.group(1).replace('_', '.')),
								name.group(2).replace('_', ' '));
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not list db-lock's migrations in " + location, ex);
			}
			MigrationVersion latest = shipped.isEmpty() ? MigrationVersion.EMPTY
					: ((TreeMap<MigrationVersion, String>) shipped).lastKey();
			return new History(sql, shipped, latest);
		}

	}

}
