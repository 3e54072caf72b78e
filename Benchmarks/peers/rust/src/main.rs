//! rust-reqwest: reqwest (on hyper and tokio) driven with the load of CurlewBenchmark
//! (Benchmarks/Sources/CurlewBenchmark), so its rows can stand in the same table.
//!
//! ```text
//! rust-reqwest --url http://127.0.0.1:18089/small.json [--status-url http://127.0.0.1:18089/nginx_status]
//!              [--expected-bytes 225] [--requests 5000] [--warmup 200] [--concurrency 1,16,64]
//!              [--rounds 1] [--ca-file ca.pem] [--http-version 1.1|2] [--no-header]
//! ```
//!
//! A multi-thread tokio runtime with one worker per CPU. Per concurrency level and round: a fresh
//! `reqwest::Client` (keep-alive, idle connections kept per host without limit), a warm-up batch,
//! then the measured batch, with exactly c requests in flight (c tasks claiming request slots from
//! a shared counter, as the Swift TaskGroupDriver does). Each body is collected whole
//! (`Response::bytes`); a status other than 200, a body length other than --expected-bytes or a
//! transport error is a failure, printed on stderr, and makes the exit status 1.
//!
//! A row is: requests/s of the measured batch, p50/p99 latency (nearest rank), CPU µs per request
//! (getrusage(RUSAGE_SELF) user+sys around the measured batch: every thread of the process),
//! context switches per request (ru_nvcsw+ru_nivcsw of the same getrusage, as ContextSwitches.swift
//! counts), connections nginx accepted during warm-up and measurement (stub_status, when
//! --status-url is given), failures. With --rounds N each metric is the median of the N rounds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::exit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CLIENT_NAME: &str = "rust-reqwest";

#[derive(Clone)]
struct Options {
    url: String,
    status_url: Option<String>,
    expected_bytes: Option<usize>,
    requests: usize,
    warmup: usize,
    levels: Vec<usize>,
    rounds: usize,
    ca_file: Option<String>,
    http2: bool,
    header: bool,
}

const USAGE: &str = "usage: rust-reqwest [--url URL] [--status-url URL] [--expected-bytes N] [--requests N] [--warmup N]\n\
                     \x20                   [--concurrency 1,16,64] [--rounds N] [--ca-file PEM] [--http-version 1.1|2] [--no-header]";

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        url: "http://127.0.0.1:18089/small.json".into(),
        status_url: None,
        expected_bytes: None,
        requests: 5000,
        warmup: 200,
        levels: vec![1, 16, 64],
        rounds: 1,
        ca_file: None,
        http2: false,
        header: true,
    };
    fn positive(flag: &str, text: &str) -> Result<usize, String> {
        match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{flag} expects a positive integer, got \"{text}\"")),
        }
    }
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        let mut value = || iter.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => o.url = value()?,
            "--status-url" => o.status_url = Some(value()?),
            "--expected-bytes" | "--expect-bytes" => o.expected_bytes = Some(positive(flag, &value()?)?),
            "--requests" | "-n" => o.requests = positive(flag, &value()?)?,
            "--rounds" => o.rounds = positive(flag, &value()?)?,
            "--warmup" => {
                let text = value()?;
                o.warmup = text
                    .parse()
                    .map_err(|_| format!("--warmup expects a non-negative integer, got \"{text}\""))?;
            }
            "--concurrency" | "-c" => {
                o.levels = value()?
                    .split(',')
                    .map(|part| positive(flag, part))
                    .collect::<Result<_, _>>()?;
            }
            "--ca-file" => o.ca_file = Some(value()?),
            "--http-version" => {
                o.http2 = match value()?.as_str() {
                    "1.1" => false,
                    "2" => true,
                    other => return Err(format!("--http-version expects 1.1 or 2, got \"{other}\"")),
                }
            }
            "--no-header" => o.header = false,
            "--help" | "-h" => {
                println!("{USAGE}");
                exit(0);
            }
            other => return Err(format!("unknown argument \"{other}\"")),
        }
    }
    if reqwest::Url::parse(&o.url).map(|u| u.host().is_none()).unwrap_or(true) {
        return Err(format!("--url is not an absolute URL: {}", o.url));
    }
    Ok(o)
}

/// A fresh client: keep-alive, no proxy, HTTP/1.1 only unless `--http-version 2` (then h2 by ALPN
/// over TLS), trusting `--ca-file` when given.
fn new_client(o: &Options) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .pool_idle_timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(usize::MAX);
    if let Some(path) = &o.ca_file {
        let pem = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        let cert = reqwest::Certificate::from_pem(&pem).map_err(|e| format!("{path}: {e}"))?;
        builder = builder.add_root_certificate(cert);
    }
    if !o.http2 {
        builder = builder.http1_only();
    }
    builder.build().map_err(|e| e.to_string())
}

#[derive(Default)]
struct Sample {
    /// Nanoseconds per request, successful and failed alike.
    latencies: Vec<u64>,
    failures: usize,
    first_failure: Option<String>,
    /// The first response's protocol (`HTTP/1.1`, `HTTP/2.0`).
    protocol: Option<String>,
}

impl Sample {
    fn merge(&mut self, other: Sample) {
        self.latencies.extend(other.latencies);
        self.failures += other.failures;
        if self.first_failure.is_none() {
            self.first_failure = other.first_failure;
        }
        if self.protocol.is_none() {
            self.protocol = other.protocol;
        }
    }
}

/// Sends `requests` GETs with exactly `concurrency` in flight until the batch runs out.
async fn drive(client: &reqwest::Client, o: &Options, requests: usize, concurrency: usize) -> Sample {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let client = client.clone();
        let url = o.url.clone();
        let expected = o.expected_bytes;
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let mut sample = Sample { latencies: Vec::with_capacity(requests / concurrency + 1), ..Default::default() };
            while next.fetch_add(1, Ordering::Relaxed) < requests {
                let start = Instant::now();
                let failure = match client.get(&url).send().await {
                    Err(e) => Some(e.to_string()),
                    Ok(response) => {
                        let status = response.status().as_u16();
                        if sample.protocol.is_none() {
                            sample.protocol = Some(format!("{:?}", response.version()));
                        }
                        match response.bytes().await {
                            Err(e) => Some(format!("reading the body: {e}")),
                            Ok(_) if status != 200 => Some(format!("status {status}")),
                            Ok(body) => match expected {
                                Some(bytes) if body.len() != bytes => {
                                    Some(format!("body of {} bytes, expected {bytes}", body.len()))
                                }
                                _ => None,
                            },
                        }
                    }
                };
                sample.latencies.push(start.elapsed().as_nanos() as u64);
                if let Some(failure) = failure {
                    sample.failures += 1;
                    sample.first_failure.get_or_insert(failure);
                }
            }
            sample
        }));
    }
    let mut merged = Sample { latencies: Vec::with_capacity(requests), ..Default::default() };
    for task in tasks {
        match task.await {
            Ok(sample) => merged.merge(sample),
            Err(e) => {
                merged.failures += 1;
                merged.first_failure.get_or_insert(format!("task failed: {e}"));
            }
        }
    }
    merged
}

/// User+system CPU microseconds and voluntary+involuntary context switches of the whole process.
fn process_usage() -> (u64, u64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (
        micros(usage.ru_utime) + micros(usage.ru_stime),
        usage.ru_nvcsw as u64 + usage.ru_nivcsw as u64,
    )
}

/// nginx's stub_status `accepts` counter, read over a plain `Connection: close` socket (nginx
/// counts that connection before answering, hence the -1 in connection counts).
fn accepts(status_url: &str) -> Result<i64, String> {
    let url = reqwest::Url::parse(status_url).map_err(|e| format!("{status_url}: {e}"))?;
    if url.scheme() != "http" {
        return Err(format!("the status URL must be http://: {status_url}"));
    }
    let host = url.host_str().ok_or("the status URL has no host")?;
    let port = url.port().unwrap_or(80);
    let mut stream = TcpStream::connect((host, port)).map_err(|e| format!("connect to {host}:{port}: {e}"))?;
    write!(stream, "GET {} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n", url.path())
        .map_err(|e| e.to_string())?;
    let mut page = String::new();
    stream.read_to_string(&mut page).map_err(|e| e.to_string())?;
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if line.contains("server accepts handled requests") {
            if let Some(n) = lines.next().and_then(|l| l.split_whitespace().next()).and_then(|f| f.parse().ok()) {
                return Ok(n);
            }
        }
    }
    Err(format!("unexpected stub_status page: {}", page.chars().take(200).collect::<String>()))
}

struct RunResult {
    requests_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_micros_per_request: f64,
    switches_per_request: f64,
    connections: Option<i64>,
    failures: usize,
}

/// Nearest-rank percentile of ascending values, as RunResult.percentile in Swift.
fn percentile(sorted: &[u64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

fn run(runtime: &tokio::runtime::Runtime, o: &Options, concurrency: usize) -> Result<RunResult, String> {
    let before = o.status_url.as_deref().map(accepts).transpose()?;
    let (sample, wall, cpu, switches) = runtime.block_on(async {
        let client = new_client(o)?;
        if o.warmup > 0 {
            let warmup = drive(&client, o, o.warmup, concurrency).await;
            if warmup.failures > 0 {
                eprintln!("  warm-up: {} failures, first: {}", warmup.failures, warmup.first_failure.unwrap_or_default());
            }
        }
        let (cpu_start, switches_start) = process_usage();
        let wall_start = Instant::now();
        let sample = drive(&client, o, o.requests, concurrency).await;
        let wall = wall_start.elapsed();
        let (cpu_end, switches_end) = process_usage();
        Ok::<_, String>((sample, wall, cpu_end - cpu_start, switches_end - switches_start))
    })?;
    let connections = match (before, o.status_url.as_deref()) {
        (Some(before), Some(status_url)) => Some(accepts(status_url)? - before - 1),
        _ => None,
    };
    eprintln!(
        "  protocol: {}, connections: {}",
        sample.protocol.as_deref().unwrap_or("?"),
        connections.map_or("n/a".to_string(), |c| c.to_string())
    );
    if let Some(first) = &sample.first_failure {
        eprintln!("  {} failures, first: {first}", sample.failures);
    }
    let mut latencies = sample.latencies;
    latencies.sort_unstable();
    let n = latencies.len().max(1) as f64;
    Ok(RunResult {
        requests_per_second: n / wall.as_secs_f64(),
        p50_ms: percentile(&latencies, 0.50) / 1e6,
        p99_ms: percentile(&latencies, 0.99) / 1e6,
        cpu_micros_per_request: cpu as f64 / n,
        switches_per_request: switches as f64 / n,
        connections,
        failures: sample.failures,
    })
}

fn median(results: &[RunResult], metric: impl Fn(&RunResult) -> f64) -> f64 {
    let mut values: Vec<f64> = results.iter().map(metric).collect();
    values.sort_by(|a, b| a.total_cmp(b));
    let m = values.len() / 2;
    if values.len() % 2 == 1 {
        values[m]
    } else {
        (values[m - 1] + values[m]) / 2.0
    }
}

/// The median of the rounds of one level, formatted like a row of Report.table.
fn row(concurrency: usize, results: &[RunResult]) -> String {
    let connections: Vec<i64> = results.iter().filter_map(|r| r.connections).collect();
    let connections = match (connections.iter().min(), connections.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
        (Some(lo), Some(hi)) => format!("{lo}–{hi}"),
        _ => "n/a".into(),
    };
    format!(
        "| {CLIENT_NAME} | {concurrency} | {:.0} | {:.3} | {:.3} | {:.1} | {:.2} | {connections} | {} |",
        median(results, |r| r.requests_per_second),
        median(results, |r| r.p50_ms),
        median(results, |r| r.p99_ms),
        median(results, |r| r.cpu_micros_per_request),
        median(results, |r| r.switches_per_request),
        results.iter().map(|r| r.failures).sum::<usize>(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = parse_options(&args).unwrap_or_else(|message| {
        eprintln!("error: {message}\n{USAGE}");
        exit(64);
    });
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("error: tokio runtime: {e}");
            exit(1);
        });
    let mut by_level: Vec<(usize, Vec<RunResult>)> = Vec::new();
    for round in 1..=o.rounds {
        for &level in &o.levels {
            eprintln!(
                "round {round}/{}: {CLIENT_NAME} ({workers} tokio workers), c={level}: {} warm-up + {} requests",
                o.rounds, o.warmup, o.requests
            );
            let result = run(&runtime, &o, level).unwrap_or_else(|message| {
                eprintln!("error: {message}");
                exit(1);
            });
            match by_level.iter_mut().find(|(l, _)| *l == level) {
                Some((_, results)) => results.push(result),
                None => by_level.push((level, vec![result])),
            }
        }
    }
    if o.header {
        println!("| client | c | requests/s | p50 ms | p99 ms | CPU µs/req | context switches/req | connections | failures |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    }
    let mut failures = 0;
    for (level, results) in &by_level {
        println!("{}", row(*level, results));
        failures += results.iter().map(|r| r.failures).sum::<usize>();
    }
    if failures > 0 {
        eprintln!("{CLIENT_NAME}: {failures} failed requests");
        exit(1);
    }
}
