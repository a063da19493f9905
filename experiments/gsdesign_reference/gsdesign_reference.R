# Evaluate gatecal's sequential designs with gsDesign's own gsBinomialExact, and run
# gsDesign's binomialSPRT examples, from the R sources of a gsDesign git checkout.
#
# Usage: Rscript gsdesign_reference.R GSDESIGN_GIT_DIR COMMIT FIXTURE_DIR
#
# Reads FIXTURE_DIR/designs.csv, thetas.csv and sprt_calls.csv (written by designs.py) and
# writes FIXTURE_DIR/gsbinomialexact.csv, binomialsprt.csv and versions.txt. Only R/gsUtilities.R
# (checkScalar, checkVector) and R/gsBinomialExact.R (gsBinomialExact, binomialSPRT) are
# sourced, as they are at COMMIT; nothing is installed. Every number is written with
# sprintf("%.17g"), which gives back the same double when read.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) {
  stop("usage: Rscript gsdesign_reference.R GSDESIGN_GIT_DIR COMMIT FIXTURE_DIR")
}
repo <- args[1]
commit <- args[2]
dir <- args[3]

git <- function(...) {
  out <- suppressWarnings(system2("git", c("-C", repo, ...), stdout = TRUE, stderr = FALSE))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) {
    stop("git -C ", repo, " ", paste(c(...), collapse = " "), " failed (status ", status, ")")
  }
  out
}
resolved <- git("rev-parse", "--verify", paste0(commit, "^{commit}"))
if (resolved != commit) {
  stop("commit ", commit, " resolves to ", resolved, ": give the full 40-digit commit")
}
for (f in c("R/gsUtilities.R", "R/gsBinomialExact.R")) {
  eval(parse(text = git("show", paste0(commit, ":", f))), envir = globalenv())
}
description <- git("show", paste0(commit, ":DESCRIPTION"))
version <- sub("^Version: *", "", grep("^Version:", description, value = TRUE))

num <- function(x) sprintf("%.17g", x)

# -- gatecal's designs ------------------------------------------------------------------------
designs <- read.csv(file.path(dir, "designs.csv"), stringsAsFactors = FALSE)
thetas <- read.csv(file.path(dir, "thetas.csv"), stringsAsFactors = FALSE,
                   colClasses = c("character", "character", "character"))
rows <- list()
for (id in unique(designs$id)) {
  d <- designs[designs$id == id & designs$to_gsdesign == 1, ]
  d <- d[order(d$look), ]
  theta <- as.numeric(thetas$theta[thetas$id == id])
  x <- gsBinomialExact(k = nrow(d), theta = theta, n.I = d$n_I, a = d$a, b = d$b)
  for (h in seq_along(theta)) {
    rows[[length(rows) + 1]] <- data.frame(
      id = id, theta = num(theta[h]), look = d$look, n_I = d$n_I, a = d$a, b = d$b,
      lower_prob = num(x$lower$prob[, h]), upper_prob = num(x$upper$prob[, h]),
      en = num(x$en[h])
    )
  }
}
write.csv(do.call(rbind, rows), file.path(dir, "gsbinomialexact.csv"), row.names = FALSE,
          quote = FALSE)

# -- gsDesign's binomialSPRT ----------------------------------------------------------------
calls <- read.csv(file.path(dir, "sprt_calls.csv"), stringsAsFactors = FALSE,
                  colClasses = c("character", rep("numeric", 4), "integer", "integer",
                                 "character"))
out <- list()
emit <- function(id, fun, y, x) {
  for (h in seq_along(x$theta)) {
    out[[length(out) + 1]] <<- data.frame(
      id = id, fun = fun, theta = num(x$theta[h]), analysis = seq_len(x$k), n_I = x$n.I,
      a = x$lower$bound, b = x$upper$bound,
      lower_prob = num(x$lower$prob[, h]), upper_prob = num(x$upper$prob[, h]),
      en = num(x$en[h]), slope = num(y$slope), intercept_upper = num(y$intercept[1]),
      intercept_lower = num(y$intercept[2])
    )
  }
}
for (i in seq_len(nrow(calls))) {
  cl <- calls[i, ]
  y <- binomialSPRT(p0 = cl$p0, p1 = cl$p1, alpha = cl$alpha, beta = cl$beta,
                    minn = cl$minn, maxn = cl$maxn)
  emit(cl$id, "binomialSPRT", y, y)
  extra <- if (is.na(cl$thetas) || cl$thetas == "") numeric(0) else
    as.numeric(strsplit(cl$thetas, " ")[[1]])
  if (length(extra) > 0) {
    # as the vignette's tables: gsBinomialExact on binomialSPRT's bounds at more rates
    z <- gsBinomialExact(k = length(y$n.I), theta = extra, n.I = y$n.I,
                         a = y$lower$bound, b = y$upper$bound)
    emit(cl$id, "gsBinomialExact", y, z)
  }
}
write.csv(do.call(rbind, out), file.path(dir, "binomialsprt.csv"), row.names = FALSE,
          quote = FALSE)

writeLines(c(
  paste("R:", R.version.string),
  paste("gsDesign:", version, "(git", commit, "; R/gsUtilities.R and R/gsBinomialExact.R sourced)")
), file.path(dir, "versions.txt"))
