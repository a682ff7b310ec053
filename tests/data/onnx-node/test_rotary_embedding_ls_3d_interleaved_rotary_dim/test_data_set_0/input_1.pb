B	cos_cacheJ0Ë*_?V X?
.Ü>üæ¾ÊGN=¾Îz?¹CÉ½ÄÛs>ý¿g©†=ÕZX?‹”@?