# frozen_string_literal: true

# `rake chaos`: a fault-injection run (chaos/runner.rb) and its check. Options
# through the environment or as arguments:
#   rake chaos ENGINE=postgres WORKERS=6 RESOURCES=4 DURATION=600 SEED=1 FENCING=on
#   rake "chaos[postgres,6,4,600,1,on]"
# Exits non-zero when the checker found a violation. The run's folder
# (tmp/chaos/<engine>-<fenced|unfenced>-<seed>, or CHAOS_DIR) keeps the logs,
# the data (data.json), report.json and the plot (tokens.png, drawn by gnuplot
# from the tokens-*.dat files and tokens.gp beside it); the run's own
# PostgreSQL cluster is stopped at the end.
desc "Fault-injection run: workers hold leases and write under a nemesis; the checker verifies the history"
task :chaos, %i[engine workers resources duration seed fencing] => :compile do |_task, args|
  %w[engine workers resources duration seed fencing].each do |key|
    ENV[key.upcase] = args[key] if args[key]
  end
  $LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
  require_relative "../chaos/runner"
  require_relative "../chaos/plot"
  settings = Chaos::Settings.new(ENV)
  report = begin
    Chaos::Runner.new(settings).run
  ensure
    Chaos::Cluster.new(settings).stop # the run's own cluster; the data is kept in the run's folder
  end
  puts report.details unless report.ok?
  plot = File.join(settings.dir, "tokens.png")
  Chaos::Plot.new(settings.dir).write(plot)
  puts "chaos: #{settings.dir} (report.json, #{File.basename(plot)})"
  abort "chaos: #{report.violations.size} violations" unless report.ok?
end
