# zsh DRIVER SCRIPT WORDS...: what zsh offers for WORDS (the last one being completed), one a
# line, from an interactive zsh in a pseudo-terminal whose compadd prints each match.
zmodload zsh/zpty
script=$1; shift
zpty z zsh -f -i
zpty -w z "PROMPT=''"
zpty -w z "autoload -Uz compinit; compinit -u -D"
zpty -w z "source ${(q)script}"
zpty -w z "compadd () { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return \$?; fi; typeset -a __hits; builtin compadd -A __hits \"\$@\"; for h in \$__hits; do print -r -- \"<C>\$h\"; done; }"
zpty -w z "bindkey '^I' complete-word"
zpty -w z "print -r -- '<READY>'"
integer deadline=$(( SECONDS + 30 ))
ready=0
while (( SECONDS < deadline )); do
  if zpty -r -t z line; then
    [[ $line == *'<READY>'* && $line != *print* ]] && { ready=1; break }
  else
    sleep 0.05
  fi
done
(( ready )) || { print -u2 "zsh did not start"; exit 2 }
zpty -w -n z "$*"$'\t'
zpty -w -n z $'\x15'"print -r -- '<DONE>'"$'\n'
while (( SECONDS < deadline )); do
  if zpty -r -t z line; then
    [[ $line == *'<DONE>'* && $line != *print* ]] && { zpty -d z; exit 0 }
    [[ $line == *'<C>'* ]] && print -r -- "${${line##*<C>}%%$'\r'*}"
  else
    sleep 0.05
  fi
done
print -u2 "no answer from zsh"
exit 2
