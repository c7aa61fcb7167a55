# frozen_string_literal: true

# The web UI's screenshots in docs/ (docs/OPERATIONS.md#web-ui), taken by the
# browser tests in headless Chromium (test/web/browser_test.rb,
# sidekiq_tab_browser_test.rb).
namespace :web do
  desc "Take docs/web-index.png, docs/web-resource.png and this host's Sidekiq tab's in headless Chromium " \
       "(bin/setup installs it; the other Sidekiq versions': script/matrix trixie sid)"
  task screenshots: :compile do
    docs = File.expand_path("../docs", __dir__)
    ruby = [RbConfig.ruby, "-Ilib", "-Itest", TEST_WATCHDOG]
    sh({ "LEASE_MACHINES_SCREENSHOTS" => docs }, *ruby, "test/web/browser_test.rb",
       "-n", "/test_the_index|test_force_release_with_confirmation/")
    sh({ "LEASE_MACHINES_SCREENSHOTS" => docs }, *ruby, "test/web/sidekiq_tab_browser_test.rb",
       "-n", "test_the_tab_lists_filters_and_force_releases")
  end
end
