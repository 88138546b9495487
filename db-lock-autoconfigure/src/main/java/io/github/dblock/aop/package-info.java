/**
 * The method interceptor behind {@link io.github.dblock.DbLock} and the SpEL key evaluator.
 */
@NullMarked
package io.github.dblock.aop;

import org.jspecify.annotations.NullMarked;
