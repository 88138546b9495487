package io.github.dblock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows a {@link DbLockConfigurationException} in Spring Boot's "APPLICATION FAILED TO
 * START" block: its description and action, without the stack trace.
 */
class DbLockFailureAnalyzer extends AbstractFailureAnalyzer<DbLockConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, DbLockConfigurationException cause) {
		return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
	}

}
