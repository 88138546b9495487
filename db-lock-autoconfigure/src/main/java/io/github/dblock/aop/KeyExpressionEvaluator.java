package io.github.dblock.aop;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.expression.Expression;

/**
 * Evaluates {@code @DbLock} keys with Spring's expression infrastructure, as
 * {@code @EventListener(condition = ...)} does: each expression is parsed once per method
 * and evaluated in a {@link MethodBasedEvaluationContext} that resolves {@code @bean}
 * references.
 */
final class KeyExpressionEvaluator extends CachedExpressionEvaluator {

	private final Map<ExpressionKey, Expression> expressions = new ConcurrentHashMap<>(64);

	private final BeanFactoryResolver beanResolver;

	KeyExpressionEvaluator(BeanFactory beanFactory) {
		this.beanResolver = new BeanFactoryResolver(beanFactory);
	}

	/**
	 * Parses an expression and caches it for the method.
	 * @throws org.springframework.expression.ParseException if it does not parse
	 */
	void parse(String expression, AnnotatedElementKey methodKey) {
		getExpression(this.expressions, methodKey, expression);
	}

	@Nullable Object evaluate(String expression, AnnotatedElementKey methodKey, KeyExpressionRoot root) {
		Method method = root.getMethod();
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, root.getArgs(),
				getParameterNameDiscoverer());
		context.setBeanResolver(this.beanResolver);
		return getExpression(this.expressions, methodKey, expression).getValue(context);
	}

}
