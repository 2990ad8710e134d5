//! `protoprof store executor`: an Apache DataFusion Ballista executor for
//! the store's queries on a cluster (`--cluster df://…`). Ballista 55's
//! stock executor registers DataFusion's core functions only, and label
//! selectors and the store's SQL views call nested ones (`array_element`,
//! `map_keys`, …); this is the stock executor with those registered too.
//! Ballista's own scheduler serves as it is.

use std::sync::Arc;

use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};

use crate::cli::StoreExecutorArgs;
use crate::error::{CliError, Result};

pub fn run(args: &StoreExecutorArgs) -> Result<u8> {
    let config = config(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // DataFusion's plan (de)serialisation recurses deeply.
        .thread_stack_size(32 * 1024 * 1024)
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the executor's runtime: {e}")))?;
    runtime
        .block_on(start_executor_process(Arc::new(config)))
        .map_err(|e| CliError::failure(format!("executor: {e}")))?;
    Ok(0)
}

fn config(args: &StoreExecutorArgs) -> Result<ExecutorProcessConfig> {
    let (host, port) = args
        .scheduler
        .rsplit_once(':')
        .and_then(|(host, port)| Some((host, port.parse::<u16>().ok()?)))
        .ok_or_else(|| {
            CliError::failure(format!(
                "--scheduler {:?}: expected HOST:PORT",
                args.scheduler
            ))
        })?;
    let defaults = ExecutorProcessConfig::default();
    Ok(ExecutorProcessConfig {
        bind_host: args.bind.clone(),
        external_host: args.external_host.clone(),
        port: args.port,
        grpc_port: args.grpc_port,
        scheduler_host: host.to_string(),
        scheduler_port: port,
        vcores: args.concurrent_tasks.unwrap_or(defaults.vcores),
        work_dir: args.work_dir.as_ref().map(|d| d.display().to_string()),
        override_function_registry: Some(Arc::new(with_nested_functions())),
        ..defaults
    })
}

/// Ballista's function registry with DataFusion's nested functions added.
fn with_nested_functions() -> BallistaFunctionRegistry {
    let mut registry = BallistaFunctionRegistry::default();
    for function in datafusion::functions_nested::all_default_nested_functions() {
        registry
            .scalar_functions
            .insert(function.name().to_string(), function);
    }
    registry
}
